package console

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"streamdb/tests/testutil"
)

// page drives one Chromium tab for the console tests: each step has a
// deadline of its own and fails the test that runs it.
type page struct{ tab context.Context }

func newPage(t *testing.T) page { return page{tab: testutil.Browser(t)} }

// do runs steps, failing t if they do not finish within 30 s.
func (p page) do(t *testing.T, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(p.tab, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// text waits up to 10 s for an element matching sel and returns the
// first one's rendered text (its text content for SVG elements, which
// have no innerText).
func (p page) text(sel string) (string, error) {
	ctx, cancel := context.WithTimeout(p.tab, 10*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.WaitReady(chromedp.CSS(sel))); err != nil {
		return "", err
	}
	return chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(
		`(e => e ? (e.innerText ?? e.textContent) : "(no element)")(document.querySelector(%q))`, sel)))
}

// mustText is text failing t on error.
func (p page) mustText(t *testing.T, sel string) string {
	t.Helper()
	v, err := p.text(sel)
	if err != nil {
		t.Fatalf("reading %s: %v", sel, err)
	}
	return v
}

// screenshot saves the page as an artifact of the test.
func (p page) screenshot(t *testing.T, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(p.tab, 30*time.Second)
	defer cancel()
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	testutil.SaveArtifact(t, name, shot)
}
