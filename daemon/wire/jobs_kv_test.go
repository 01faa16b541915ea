package wire

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/mvd-project/mvd/daemon"
	"github.com/mvd-project/mvd/internal/natstest"
	"github.com/mvd-project/mvd/stream"
)

// TestJobsSharedAcrossInstances: two instances of one database on a
// three-node NATS cluster keep their jobs in one key-value bucket (three
// replicas): each lists, describes and waits on the other's jobs as on its
// own; an instance started again on a fresh state directory has its jobs
// back from the bucket, not from its (empty) Badger store.
func TestJobsSharedAcrossInstances(t *testing.T) {
	cl := natstest.Start(t, 3)
	dbDir := t.TempDir()
	manualView(t, dbDir, 10)
	cfgFor := func(instance string) daemon.Config {
		return testConfig(t, "--db", dbDir, "--nats-url", cl.URLs(), "--instance-id", instance,
			"--state-dir", filepath.Join(t.TempDir(), instance))
	}
	a := startJobServer(t, cfgFor("a.1"), nil)
	b := startJobServer(t, cfgFor("b"), nil)
	ja := a.wait(a.submit("v", `{"async":true}`))
	jb := b.wait(b.submit("v", `{"async":true,"full":true}`))
	if ja.State != daemon.JobSucceeded || jb.State != daemon.JobSucceeded || ja.Instance != "a.1" || jb.Instance != "b" {
		t.Fatalf("jobs %+v, %+v", ja, jb)
	}
	for _, s := range []*jobServer{a, b} {
		var list []daemon.Job
		if code := s.do("GET", "/v1/jobs", "", &list); code != http.StatusOK || len(list) != 2 || list[0].ID != jb.ID || list[1].ID != ja.ID {
			t.Fatalf("GET /v1/jobs on %s: %d %+v", s.cfg.InstanceID, code, list)
		}
		for _, want := range []daemon.Job{ja, jb} {
			var j daemon.Job
			if code := s.do("GET", "/v1/jobs/"+want.ID, "", &j); code != http.StatusOK || j.ID != want.ID || j.State != want.State || j.Instance != want.Instance {
				t.Fatalf("GET /v1/jobs/%s on %s: %d %+v", want.ID, s.cfg.InstanceID, code, j)
			}
			if j := s.wait(want.ID); j.ID != want.ID || j.State != daemon.JobSucceeded {
				t.Fatalf("wait %s on %s: %+v", want.ID, s.cfg.InstanceID, j)
			}
		}
	}
	if code := a.do("POST", "/v1/jobs/"+jb.ID+"/cancel", "", nil); code != http.StatusNotFound {
		t.Fatalf("cancel of b's job on a: %d", code)
	}

	// The bucket is replicated on three nodes.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := stream.Connect(ctx, stream.ConnectOptions{URL: cl.URLs(), Subjects: stream.Subjects{Prefix: a.cfg.SubjectPrefix}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	kv, err := conn.JetStream().KeyValue(ctx, conn.Subjects().Bucket(JobsBucket))
	if err != nil {
		t.Fatal(err)
	}
	st, err := kv.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r := st.(*jetstream.KeyValueBucketStatus).StreamInfo().Config.Replicas; r != 3 {
		t.Fatalf("jobs bucket has %d replicas, want 3", r)
	}

	// a again, on an empty state directory: its own job is its own again.
	a.stop()
	a2 := startJobServer(t, cfgFor("a.1"), nil)
	var list []daemon.Job
	if code := a2.do("GET", "/v1/jobs", "", &list); code != http.StatusOK || len(list) != 2 || list[1].ID != ja.ID || list[1].State != daemon.JobSucceeded {
		t.Fatalf("GET /v1/jobs on a restarted: %d %+v", code, list)
	}
	if j := a2.wait(a2.submit("v", `{"async":true}`)); j.State != daemon.JobSucceeded {
		t.Fatalf("job on a restarted: %+v", j)
	}
}
