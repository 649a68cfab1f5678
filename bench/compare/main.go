// Command compare prints two benchmark runs side by side: every figure the
// runs share (same benchmark, case, name and unit), its value in each run
// and the ratio new/old, then the figures only one run has. It reads the
// .json files `make bench` writes under bench/results.
//
//	go run ./bench/compare bench/results/OLD.json bench/results/NEW.json
//
// Ratios only mean something between runs on the same machine under the
// same load: compare the machine lines it prints first.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"text/tabwriter"

	"streamdb/bench"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: go run ./bench/compare OLD.json NEW.json")
		os.Exit(2)
	}
	old, err := load(os.Args[1])
	if err == nil {
		var cur *bench.Report
		if cur, err = load(os.Args[2]); err == nil {
			compare(os.Stdout, old, cur)
			return
		}
	}
	fmt.Fprintln(os.Stderr, "compare:", err)
	os.Exit(1)
}

func load(path string) (*bench.Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r := new(bench.Report)
	if err := json.Unmarshal(data, r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// figureKey identifies a figure across runs.
type figureKey struct{ benchmark, cas, name, unit string }

func keyOf(f *bench.Figure) figureKey { return figureKey{f.Benchmark, f.Case, f.Name, f.Unit} }

func compare(out *os.File, old, cur *bench.Report) {
	for _, r := range []*bench.Report{old, cur} {
		m := r.Machine
		fmt.Fprintf(out, "%s (%s): commit %s, %d CPUs, load %s -> %s\n",
			r.Timestamp, r.Mode, m.GitCommit, m.NProc, m.LoadAvgStart, m.LoadAvgEnd)
	}
	fmt.Fprintln(out)
	oldByKey := make(map[figureKey]*bench.Figure, len(old.Figures))
	for _, f := range old.Figures {
		oldByKey[keyOf(f)] = f
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "benchmark\tcase\tfigure\told\tnew\tnew/old\tunit\t")
	var onlyNew []*bench.Figure
	for _, f := range cur.Figures {
		o, ok := oldByKey[keyOf(f)]
		if !ok {
			onlyNew = append(onlyNew, f)
			continue
		}
		delete(oldByKey, keyOf(f))
		ratio := "-"
		if o.Value != 0 {
			ratio = fmt.Sprintf("%.2f", f.Value/o.Value)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%.4g\t%.4g\t%s\t%s\t\n", f.Benchmark, f.Case, f.Name, o.Value, f.Value, ratio, f.Unit)
	}
	w.Flush()
	for _, f := range old.Figures {
		if _, ok := oldByKey[keyOf(f)]; ok {
			fmt.Fprintf(out, "only in old: %s / %s / %s = %.4g %s\n", f.Benchmark, f.Case, f.Name, f.Value, f.Unit)
		}
	}
	for _, f := range onlyNew {
		fmt.Fprintf(out, "only in new: %s / %s / %s = %.4g %s\n", f.Benchmark, f.Case, f.Name, f.Value, f.Unit)
	}
}
