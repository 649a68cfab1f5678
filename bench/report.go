package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"streamdb/tests/testutil"
)

// Figure is one reported number.
type Figure struct {
	Benchmark string  `json:"benchmark"`
	Case      string  `json:"case"`
	Name      string  `json:"name"`
	Value     float64 `json:"value"`
	Unit      string  `json:"unit"`
	Note      string  `json:"note,omitempty"`
}

// Machine describes where the figures were measured.
type Machine struct {
	NProc      int    `json:"nproc"`
	GoVersion  string `json:"go_version"`
	OS         string `json:"os"`
	Arch       string `json:"arch"`
	CPU        string `json:"cpu,omitempty"`
	MemTotalKB int64  `json:"mem_total_kb,omitempty"`
	Kernel     string `json:"kernel,omitempty"`
	GitCommit  string `json:"git_commit,omitempty"`
	GitDirty   bool   `json:"git_dirty"`
	// LoadAvg is /proc/loadavg when the run started and when it ended:
	// other work on the machine skews every figure.
	LoadAvgStart string `json:"loadavg_start,omitempty"`
	LoadAvgEnd   string `json:"loadavg_end,omitempty"`
}

// Report collects the figures of one run.
type Report struct {
	mu        sync.Mutex
	Timestamp string    `json:"timestamp"`
	Mode      string    `json:"mode"`
	Machine   Machine   `json:"machine"`
	Config    []string  `json:"config"`
	Figures   []*Figure `json:"figures"`
	Notes     []string  `json:"notes"`
	// Sections are extra Markdown blocks (a benchmark's own summary table)
	// printed after the figures.
	Sections []Section `json:"sections,omitempty"`
	Wall     float64   `json:"wall_seconds"`
	started  time.Time
}

// NewReport starts a report for mode.
func NewReport(mode string) *Report {
	now := time.Now().UTC()
	return &Report{Timestamp: now.Format("2006-01-02T15-04-05Z"), Mode: mode, Machine: machineInfo(), started: now}
}

// Add records a figure.
func (r *Report) Add(bench, cas, name string, value float64, unit string) *Figure {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := &Figure{Benchmark: bench, Case: cas, Name: name, Value: value, Unit: unit}
	r.Figures = append(r.Figures, f)
	return f
}

// Notef records a free-text note (what looked wrong, what was reduced).
func (r *Report) Notef(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Notes = append(r.Notes, fmt.Sprintf(format, args...))
}

// Section is a titled Markdown block of a report.
type Section struct {
	Title    string `json:"title"`
	Markdown string `json:"markdown"`
}

// AddSection appends a Markdown block (e.g. a summary table) to the report.
func (r *Report) AddSection(title, markdown string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Sections = append(r.Sections, Section{Title: title, Markdown: markdown})
}

// Configf records one line of the run's parameters.
func (r *Report) Configf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Config = append(r.Config, fmt.Sprintf(format, args...))
}

// Empty reports whether nothing was recorded.
func (r *Report) Empty() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.Figures) == 0 && len(r.Notes) == 0
}

// Markdown renders the report.
func (r *Report) Markdown() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	m := r.Machine
	fmt.Fprintf(&b, "# streamdb benchmarks %s (mode %s)\n\n", r.Timestamp, r.Mode)
	fmt.Fprintf(&b, "Machine: %d CPUs (%s), %.1f GiB RAM, %s %s/%s, kernel %s, commit %s%s; wall time %.0f s; "+
		"load average at start %s, at end %s.\n\n",
		m.NProc, orDash(m.CPU), float64(m.MemTotalKB)/(1<<20), m.GoVersion, m.OS, m.Arch, orDash(m.Kernel),
		orDash(m.GitCommit), map[bool]string{true: " (dirty tree)", false: ""}[m.GitDirty], r.Wall,
		orDash(m.LoadAvgStart), orDash(m.LoadAvgEnd))
	if len(r.Config) > 0 {
		b.WriteString("Parameters:\n\n")
		for _, c := range r.Config {
			fmt.Fprintf(&b, "- %s\n", c)
		}
		b.WriteString("\n")
	}
	b.WriteString("| benchmark | case | figure | value | unit |\n|---|---|---|---:|---|\n")
	for _, f := range r.Figures {
		name := f.Name
		if f.Note != "" {
			name += " (" + f.Note + ")"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", f.Benchmark, f.Case, name, formatValue(f.Value), f.Unit)
	}
	for _, sec := range r.Sections {
		fmt.Fprintf(&b, "\n## %s\n\n%s", sec.Title, sec.Markdown)
		if !strings.HasSuffix(sec.Markdown, "\n") {
			b.WriteString("\n")
		}
	}
	if len(r.Notes) > 0 {
		b.WriteString("\nNotes:\n\n")
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	return b.String()
}

// Finish records the wall time and the load average at the end.
func (r *Report) Finish() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Wall = math.Round(time.Since(r.started).Seconds())
	r.Machine.LoadAvgEnd = loadAvg()
}

// Write stores the report as dir/<timestamp>-<mode>.md and .json and
// returns the two paths.
func (r *Report) Write(dir string) (string, string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	base := filepath.Join(dir, r.Timestamp+"-"+r.Mode)
	md := base + ".md"
	if err := os.WriteFile(md, []byte(r.Markdown()), 0o644); err != nil {
		return "", "", err
	}
	r.mu.Lock()
	data, err := json.MarshalIndent(r, "", "  ")
	r.mu.Unlock()
	if err != nil {
		return "", "", err
	}
	js := base + ".json"
	if err := os.WriteFile(js, append(data, '\n'), 0o644); err != nil {
		return "", "", err
	}
	return md, js, nil
}

func formatValue(v float64) string {
	switch {
	case math.IsNaN(v):
		return "n/a"
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 100:
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 1:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.3f", v)
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func machineInfo() Machine {
	m := Machine{NProc: runtime.NumCPU(), GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	if out, err := exec.Command("nproc").Output(); err == nil {
		fmt.Sscanf(strings.TrimSpace(string(out)), "%d", &m.NProc)
	}
	if out, err := exec.Command("go", "version").Output(); err == nil {
		// The toolchain that built the server may differ from this binary's.
		if f := strings.Fields(string(out)); len(f) >= 3 {
			m.GoVersion = f[2]
		}
	}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	m.MemTotalKB = testutil.ProcKB("/proc/meminfo", "MemTotal")
	m.LoadAvgStart = loadAvg()
	if out, err := exec.Command("uname", "-r").Output(); err == nil {
		m.Kernel = strings.TrimSpace(string(out))
	}
	if out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output(); err == nil {
		m.GitCommit = strings.TrimSpace(string(out))
		if out, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil {
			m.GitDirty = len(strings.TrimSpace(string(out))) > 0
		}
	}
	return m
}

// loadAvg returns the 1, 5 and 15 minute load averages.
func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// LoadAvg1 returns the 1 minute load average.
func LoadAvg1() float64 {
	var x float64
	fmt.Sscanf(loadAvg(), "%g", &x)
	return x
}

// Stats summarises samples.
type Stats struct {
	N                  int
	Min, P50, P99, Max float64
	Mean               float64
}

// Summarize computes Stats of xs (NaN figures when empty).
func Summarize(xs []float64) Stats {
	if len(xs) == 0 {
		nan := math.NaN()
		return Stats{Min: nan, P50: nan, P99: nan, Max: nan, Mean: nan}
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	q := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(s)))) - 1
		return s[max(0, min(i, len(s)-1))]
	}
	sum := 0.0
	for _, x := range s {
		sum += x
	}
	return Stats{N: len(s), Min: s[0], P50: q(0.5), P99: q(0.99), Max: s[len(s)-1], Mean: sum / float64(len(s))}
}
