package s3fs

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// ErrBadOption marks an unknown or malformed storage option or URI.
var ErrBadOption = errors.New("bad object storage setting")

// Options are the settings of an S3 store, named as LanceDB's object_store
// names them (see Settings).
type Options struct {
	Endpoint        string // aws_endpoint / AWS_ENDPOINT: custom endpoint URL; path-style addressing then
	Region          string // aws_region / AWS_REGION (default us-east-1)
	AccessKeyID     string // aws_access_key_id / AWS_ACCESS_KEY_ID
	SecretAccessKey string // aws_secret_access_key / AWS_SECRET_ACCESS_KEY
	SessionToken    string // aws_session_token / AWS_SESSION_TOKEN
	// AllowHTTP (allow_http / AWS_ALLOW_HTTP=true) permits an http://
	// endpoint; without it only https is used.
	AllowHTTP bool
	// VirtualHosted (aws_virtual_hosted_style_request) turns path-style
	// addressing off.
	VirtualHosted bool
	// MetadataEndpoint (aws_metadata_endpoint / AWS_METADATA_ENDPOINT)
	// turns the instance-metadata credential source on, at that address.
	// Without it mvd never contacts an instance-metadata address.
	MetadataEndpoint string
}

// keys maps each accepted storage-option key (lower case, as LanceDB
// accepts them with or without the "aws_" prefix) and its environment
// variable to the Options field it sets.
var keys = []struct {
	names []string
	env   string
	set   func(*Options, string) error
}{
	{[]string{"aws_endpoint", "endpoint", "aws_endpoint_url", "endpoint_url"}, "AWS_ENDPOINT", func(o *Options, v string) error { o.Endpoint = v; return nil }},
	{[]string{"aws_region", "region", "aws_default_region"}, "AWS_REGION", func(o *Options, v string) error { o.Region = v; return nil }},
	{[]string{"aws_access_key_id", "access_key_id"}, "AWS_ACCESS_KEY_ID", func(o *Options, v string) error { o.AccessKeyID = v; return nil }},
	{[]string{"aws_secret_access_key", "secret_access_key"}, "AWS_SECRET_ACCESS_KEY", func(o *Options, v string) error { o.SecretAccessKey = v; return nil }},
	{[]string{"aws_session_token", "session_token", "aws_token", "token"}, "AWS_SESSION_TOKEN", func(o *Options, v string) error { o.SessionToken = v; return nil }},
	{[]string{"allow_http", "aws_allow_http"}, "AWS_ALLOW_HTTP", func(o *Options, v string) error { return setBool(&o.AllowHTTP, v) }},
	{[]string{"aws_virtual_hosted_style_request", "virtual_hosted_style_request"}, "AWS_VIRTUAL_HOSTED_STYLE_REQUEST", func(o *Options, v string) error { return setBool(&o.VirtualHosted, v) }},
	{[]string{"aws_metadata_endpoint", "metadata_endpoint"}, "AWS_METADATA_ENDPOINT", func(o *Options, v string) error { o.MetadataEndpoint = v; return nil }},
}

func setBool(dst *bool, v string) error {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "1", "yes":
		*dst = true
	case "false", "0", "no", "":
		*dst = false
	default:
		return fmt.Errorf("%w: %q is not a boolean", ErrBadOption, v)
	}
	return nil
}

// Settings builds Options from the environment (getenv, os.Getenv when
// nil) and then storage options (LanceDB's keys, case-insensitive), which
// win over the environment. An unknown storage-option key is an error, so
// a typo is not silently ignored.
func Settings(getenv func(string) string, storage map[string]string) (Options, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	var o Options
	for _, k := range keys {
		if v := getenv(k.env); v != "" {
			if err := k.set(&o, v); err != nil {
				return Options{}, fmt.Errorf("%s: %w", k.env, err)
			}
		}
	}
	for name, v := range storage {
		k, ok := lookupKey(name)
		if !ok {
			return Options{}, fmt.Errorf("%w: unknown storage option %q", ErrBadOption, name)
		}
		if err := k(&o, v); err != nil {
			return Options{}, fmt.Errorf("storage option %s: %w", name, err)
		}
	}
	return o, nil
}

func lookupKey(name string) (func(*Options, string) error, bool) {
	name = strings.ToLower(strings.TrimSpace(name))
	for _, k := range keys {
		for _, n := range k.names {
			if n == name {
				return k.set, true
			}
		}
	}
	return nil, false
}

// ParseURI splits s3://BUCKET/PREFIX into the bucket and the key prefix
// (without slashes at either end; "" for the bucket's root).
func ParseURI(uri string) (bucket, prefix string, err error) {
	rest, ok := strings.CutPrefix(uri, "s3://")
	if !ok {
		return "", "", fmt.Errorf("%w: %q is not an s3:// URI", ErrBadOption, uri)
	}
	bucket, prefix, _ = strings.Cut(rest, "/")
	if bucket == "" {
		return "", "", fmt.Errorf("%w: %q names no bucket", ErrBadOption, uri)
	}
	return bucket, strings.Trim(prefix, "/"), nil
}

// client builds the S3 client for o. Credentials are the static keys when
// given, else the SDK's default chain (environment, shared files, SSO…)
// with the instance-metadata source disabled unless o.MetadataEndpoint
// asks for it.
func (o Options) client(ctx context.Context) (*s3.Client, error) {
	region := o.Region
	if region == "" {
		region = "us-east-1"
	}
	if o.Endpoint != "" {
		u, err := url.Parse(o.Endpoint)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("%w: endpoint %q is not a URL", ErrBadOption, o.Endpoint)
		}
		if u.Scheme == "http" && !o.AllowHTTP {
			return nil, fmt.Errorf("%w: endpoint %s is http; set allow_http=true (or AWS_ALLOW_HTTP=true) to use it", ErrBadOption, o.Endpoint)
		}
	}
	var cfg aws.Config
	if o.AccessKeyID != "" {
		cfg = aws.Config{Credentials: credentials.NewStaticCredentialsProvider(o.AccessKeyID, o.SecretAccessKey, o.SessionToken)}
	} else {
		loads := []func(*config.LoadOptions) error{config.WithEC2IMDSClientEnableState(imds.ClientDisabled)}
		if o.MetadataEndpoint != "" {
			loads = []func(*config.LoadOptions) error{config.WithEC2IMDSEndpoint(o.MetadataEndpoint)}
		}
		var err error
		if cfg, err = config.LoadDefaultConfig(ctx, loads...); err != nil {
			return nil, fmt.Errorf("load AWS settings: %w", err)
		}
	}
	cfg.Region = region
	// Checksums only where S3 requires them: S3-compatible servers do not
	// all accept the SDK's default streaming checksum trailers.
	cfg.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
	cfg.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	return s3.NewFromConfig(cfg, func(so *s3.Options) {
		if o.Endpoint != "" {
			so.BaseEndpoint = aws.String(o.Endpoint)
			so.UsePathStyle = !o.VirtualHosted
		}
	}), nil
}
