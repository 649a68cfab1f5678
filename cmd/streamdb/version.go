package main

import (
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
)

// version and commit are set at link time by the Makefile (-ldflags "-X
// main.version=... -X main.commit=..."); a plain go build leaves them
// empty and versionText falls back to the build's VCS stamp.
var (
	version string
	commit  string
)

// versionText is the line `streamdb version` and `--version` print: the
// version, the commit it was built from ("+modified" when the tree had
// uncommitted changes) and the Go release.
func versionText() string {
	v, c := version, commit
	if info, ok := debug.ReadBuildInfo(); ok {
		if v == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			v = info.Main.Version
		}
		if c == "" {
			var rev, modified string
			for _, s := range info.Settings {
				switch s.Key {
				case "vcs.revision":
					rev = s.Value
				case "vcs.modified":
					modified = s.Value
				}
			}
			if len(rev) > 12 {
				rev = rev[:12]
			}
			if rev != "" && modified == "true" {
				rev += "+modified"
			}
			c = rev
		}
	}
	if v == "" {
		v = "dev"
	}
	if c == "" {
		c = "unknown"
	}
	return fmt.Sprintf("streamdb %s (commit %s, %s %s/%s)", v, c, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// subcommands are what `streamdb COMMAND` runs besides the server; the
// usage lists them all.
var subcommands = []struct{ name, args, what string }{
	{"savepoint", "[--server DSN] create NAME | list | release NAME | rollback NAME", "manage savepoints of a running server"},
	{"nexmark", "[--nats-url URL] [--events N] [--rate N] [--out FILE] ...", "publish the Nexmark auction workload to NATS"},
	{"version", "", "print the version and commit, and exit (also --version)"},
	{"help", "", "print this help, and exit (also --help)"},
}

// printUsage writes the server's usage: its subcommands, then the flags
// of the server itself.
func printUsage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintln(w, "usage: streamdb [flags]            start the server (see the flags below)")
	for _, c := range subcommands {
		fmt.Fprintln(w, strings.TrimRight("       streamdb "+c.name+" "+c.args, " "))
	}
	fmt.Fprintln(w, "\ncommands:")
	for _, c := range subcommands {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.what)
	}
	fmt.Fprintln(w, "  streamdb COMMAND --help lists a command's flags.")
	fmt.Fprintln(w, "\nserver flags:")
	fs.SetOutput(w)
	fs.PrintDefaults()
}
