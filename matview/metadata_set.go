package matview

import (
	"context"
	"errors"
	"sort"
	"strconv"
	"strings"

	"github.com/mvd-project/mvd/lance"
)

// reservedKeys are the view metadata keys that only CreateView and
// refreshes write: changing them by hand would corrupt the definition or
// the watermark.
var reservedKeys = map[string]bool{
	KeyDefinition:      true,
	KeyIncarnation:     true,
	KeySourceVersion:   true,
	KeySourceVersionTS: true,
	KeyRefreshedAtMs:   true,
	KeyViewVersion:     true,
}

// checkUserKey refuses a metadata key that callers may not set on view.
func checkUserKey(view, k string) error {
	if !strings.HasPrefix(k, KeyPrefix) || len(k) == len(KeyPrefix) {
		return errorf(ErrInvalid, nil, "view '%s': metadata key %q must start with %q", view, k, KeyPrefix)
	}
	if reservedKeys[k] {
		return errorf(ErrInvalid, nil, "view '%s': metadata key %q is written by create and refresh only", view, k)
	}
	return nil
}

// setMetadataAttempts bounds the retries of SetMetadata when a concurrent
// commit (a refresh) wins the race for the next view version.
const setMetadataAttempts = 8

// SetMetadata sets view metadata keys (such as the auto-refresh policy
// keys of package daemon) in one metadata-only commit of the view. A key
// with an empty value is removed. Keys must start with KeyPrefix ("mv.")
// and must not be one of the definition or watermark keys (ErrInvalid).
//
// The commit keeps the watermark valid: if the view was as its last
// refresh left it (mv.view_version is its latest version), mv.view_version
// moves to the new version, so neither LanceDB nor mvd takes the change for
// drift and the next refresh with nothing new is still a no_op. A view
// that had drifted stays drifted. The commit refuses to rebase; when a
// refresh commits first, SetMetadata reads the view again and retries.
// It returns the view version committed.
func (v *View) SetMetadata(ctx context.Context, kv map[string]string) (uint64, error) {
	set := map[string]string{}
	var del []string
	for k, val := range kv {
		if err := checkUserKey(v.name, k); err != nil {
			return 0, err
		}
		if val == "" {
			del = append(del, k)
		} else {
			set[k] = val
		}
	}
	sort.Strings(del)
	// One refresh at a time per View: ours cannot interleave.
	v.mu.Lock()
	defer v.mu.Unlock()
	for attempt := 0; ; attempt++ {
		vm, _, err := v.current(ctx)
		if err != nil {
			return 0, err
		}
		c := &lance.Commit{SchemaMetadata: map[string]string{}, Rebase: lance.RebaseNever}
		for k, val := range set {
			if vm.Schema.Metadata[k] != val {
				c.SchemaMetadata[k] = val
			}
		}
		for _, k := range del {
			if _, ok := vm.Schema.Metadata[k]; ok {
				c.DeleteSchemaMetadata = append(c.DeleteSchemaMetadata, k)
			}
		}
		if len(c.SchemaMetadata) == 0 && len(c.DeleteSchemaMetadata) == 0 {
			return vm.Version, nil // already so: no commit
		}
		if wm := watermarkOf(vm.Schema.Metadata); wm.Valid && wm.ViewVersion == vm.Version {
			c.SchemaMetadata[KeyViewVersion] = strconv.FormatUint(vm.Version+1, 10)
		}
		m, err := v.table.Commit(ctx, vm, c)
		if err == nil {
			return m.Version, nil
		}
		if errors.Is(err, lance.ErrConflict) && attempt+1 < setMetadataAttempts && ctx.Err() == nil {
			continue
		}
		if errors.Is(err, lance.ErrConflict) {
			return 0, errorf(ErrConflict, err, "view '%s': set metadata: %v", v.name, err)
		}
		return 0, errorf(ErrStorage, err, "view '%s': set metadata: commit version %d: %v", v.name, vm.Version+1, err)
	}
}
