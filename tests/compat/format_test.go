package compat

import (
	"bytes"
	"context"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"streamdb/catalog"
	"streamdb/storage"
	"streamdb/tests/testutil"
)

// TestRefuseUnreadableFormat: a data directory whose view, or the
// directory itself, holds state in a format newer than this binary reads
// is refused at start with 0A000 and a hint, instead of being misread.
func TestRefuseUnreadableFormat(t *testing.T) {
	bin := testutil.BuildServer(t)
	srv := testutil.StartServer(t, testutil.ServerOptions{Binary: bin})
	conn := srv.Conn(t)
	exec(t, conn, schema[0], "CREATE MATERIALIZED VIEW per_k AS "+views["per_k"])
	srv.Stop(t)
	newer := catalog.DataflowLatest + 1

	editDescriptor(t, srv.DataDir, "per_k", func(d *catalog.Descriptor) { d.Dataflow = newer })
	out := startRefused(t, bin, srv.DataDir)
	for _, want := range []string{
		"materialized view per_k holds state in format " + strconv.Itoa(int(newer)) + ", newer than this streamdb reads",
		"(SQLSTATE 0A000)", "HINT: Start it with the streamdb release that wrote it",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("a view of format %d: output lacks %q:\n%s", newer, want, out)
		}
	}

	// The view readable again, the directory's own record newer.
	editDescriptor(t, srv.DataDir, "per_k", func(d *catalog.Descriptor) { d.Dataflow = catalog.DataflowLatest })
	st, err := storage.Open(filepath.Join(srv.DataDir, "state"))
	if err != nil {
		t.Fatal(err)
	}
	b := st.NewBatch()
	if err := st.RatchetFormat(b, newer); err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(b, true); err != nil {
		t.Fatal(err)
	}
	b.Close()
	st.Close()
	if out := startRefused(t, bin, srv.DataDir); !strings.Contains(out, "the data directory holds state in format "+strconv.Itoa(int(newer))) {
		t.Errorf("a directory of format %d: output lacks the refusal:\n%s", newer, out)
	}
}

// editDescriptor changes the catalog entry of object name in the data
// directory of a stopped server.
func editDescriptor(t *testing.T, dataDir, name string, edit func(*catalog.Descriptor)) {
	t.Helper()
	st, descs := openCatalog(t, dataDir)
	defer st.Close()
	for _, d := range descs {
		if d.Name != name {
			continue
		}
		edit(d)
		b := st.NewBatch()
		defer b.Close()
		if err := storage.PutDescriptor(b, d); err != nil {
			t.Fatal(err)
		}
		if err := st.Commit(b, true); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("no object %s in the catalog", name)
}

// openCatalog opens the state of a stopped server's data directory and
// reads its catalog; the caller closes the store.
func openCatalog(t *testing.T, dataDir string) (*storage.Store, []*catalog.Descriptor) {
	t.Helper()
	st, err := storage.Open(filepath.Join(dataDir, "state"))
	if err != nil {
		t.Fatal(err)
	}
	descs, err := storage.Descriptors(st.DB())
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	return st, descs
}

// startRefused starts the server on dataDir and returns its output once
// it exits; a server that starts instead fails the test.
func startRefused(t *testing.T, bin, dataDir string, args ...string) string {
	t.Helper()
	return startExits(t, bin, dataDir, nil, args...)
}

// startExits is startRefused with env added to the server's environment.
func startExits(t *testing.T, bin, dataDir string, env []string, args ...string) string {
	t.Helper()
	ports := testutil.FreePorts(t, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := osexec.CommandContext(ctx, bin, "--data-dir", dataDir, "--http-listen", "",
		"--listen", "127.0.0.1:"+strconv.Itoa(ports[0]), "--nats-listen", "127.0.0.1:"+strconv.Itoa(ports[1]))
	cmd.Args = append(cmd.Args, args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("the server did not exit on a data directory it cannot read:\n%s", out.String())
	}
	if err == nil {
		t.Fatalf("the server exited with status 0 on a data directory it cannot read:\n%s", out.String())
	}
	return out.String()
}

// TestRefuseUnmovableView: a data directory with a view older than
// catalog.DataflowMinSupported that cannot move forward is refused at
// start with 0A000, the view, its format and a hint. hi_lo_raw, written
// by the binary of ef4883f (format 0, a reader per scan), scans a stream
// without a WATERMARK twice: its two readers would be one from
// DataflowSharedScans on, and no migration merges them.
func TestRefuseUnmovableView(t *testing.T) {
	dataDir := t.TempDir()
	extractTarball(t, filepath.Join("testdata", "refused", "shared-scans-2026-11-29.tar.gz"), dataDir)
	out := startRefused(t, testutil.BuildServer(t), dataDir)
	for _, want := range []string{
		fmt.Sprintf("materialized view hi_lo_raw holds state in format 0, older than this streamdb reads (formats %d to %d)",
			catalog.DataflowMinSupported, catalog.DataflowLatest),
		"(SQLSTATE 0A000)", "HINT: Open it with a streamdb release that reads format 0",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
