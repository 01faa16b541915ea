package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mvd-project/mvd/lance"
	"github.com/mvd-project/mvd/vfs"
	"github.com/mvd-project/mvd/vfs/s3fs"
)

// storageOptionFlag is the repeatable KEY=VALUE flag of object-store
// settings, with LanceDB's keys (aws_endpoint, aws_region, allow_http, …);
// they win over the environment's AWS_* settings.
const storageOptionFlag = "storage-option"

func addStorageOptionFlag(cmd *cobra.Command) {
	cmd.Flags().StringArray(storageOptionFlag, nil, "object-store setting `KEY=VALUE` for s3:// paths, with LanceDB's keys (aws_endpoint, aws_region, aws_access_key_id, aws_secret_access_key, aws_session_token, allow_http); repeatable, over the AWS_* environment")
}

// storageOptions parses the command's --storage-option flags (none when
// the command has no such flag).
func storageOptions(cmd *cobra.Command) (map[string]string, error) {
	f := cmd.Flags().Lookup(storageOptionFlag)
	if f == nil {
		return nil, nil
	}
	raw, err := cmd.Flags().GetStringArray(storageOptionFlag)
	if err != nil {
		return nil, err
	}
	return parseStorageOptions(raw)
}

func parseStorageOptions(raw []string) (map[string]string, error) {
	out := map[string]string{}
	for _, kv := range raw {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, usagef("--storage-option %q: want KEY=VALUE", kv)
		}
		out[strings.TrimSpace(k)] = v
	}
	return out, nil
}

type storageOptionsKey struct{}

// tableCtx is cmd's context carrying its --storage-option flags, for
// openTable.
func tableCtx(cmd *cobra.Command) context.Context {
	raw, _ := cmd.Flags().GetStringArray(storageOptionFlag)
	return context.WithValue(cmd.Context(), storageOptionsKey{}, raw)
}

// isObjectPath reports whether path names object storage (s3://).
func isObjectPath(path string) bool { return strings.HasPrefix(path, "s3://") }

// openTable opens the table at path: a local directory, or
// s3://BUCKET/KEY with the settings of the environment and of the
// --storage-option flags tableCtx put in ctx.
func openTable(ctx context.Context, path string) (*lance.Table, error) {
	if !isObjectPath(path) {
		if i := strings.Index(path, "://"); i > 0 && !strings.ContainsAny(path[:i], "/.") {
			return nil, fmt.Errorf("table %s: only local paths and s3:// are supported", path)
		}
		return lance.Open(ctx, vfs.OS(), path)
	}
	fsys, root, err := openStore(ctx, path)
	if err != nil {
		return nil, err
	}
	return lance.Open(ctx, fsys, root)
}

// openStore returns the store of the s3://BUCKET/KEY path (settings as
// openTable takes them) and KEY, the path's name in it.
func openStore(ctx context.Context, path string) (vfs.FS, string, error) {
	raw, _ := ctx.Value(storageOptionsKey{}).([]string)
	so, err := parseStorageOptions(raw)
	if err != nil {
		return nil, "", err
	}
	bucket, root, err := s3fs.ParseURI(path)
	if err != nil {
		return nil, "", err
	}
	settings, err := s3fs.Settings(nil, so)
	if err != nil {
		return nil, "", fmt.Errorf("table %s: %w", path, err)
	}
	fsys, err := s3fs.New(ctx, bucket, settings)
	if err != nil {
		return nil, "", fmt.Errorf("table %s: %w", path, err)
	}
	return fsys, root, nil
}
