package nexmark

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"
)

func TestKindRule(t *testing.T) {
	g := NewGenerator(Config{Seed: 1})
	for n := uint64(0); n < 1000; n++ {
		want := KindBid
		switch n % 50 {
		case 0:
			want = KindPerson
		case 1, 2, 3:
			want = KindAuction
		}
		e := g.Next()
		if e.N != n || e.Kind != want {
			t.Fatalf("event %d: kind %v, want %v", n, e.Kind, want)
		}
		if (e.Person != nil) != (want == KindPerson) || (e.Auction != nil) != (want == KindAuction) || (e.Bid != nil) != (want == KindBid) {
			t.Fatalf("event %d: wrong record set: %+v", n, e)
		}
	}
}

func TestIDSequences(t *testing.T) {
	g := NewGenerator(Config{Seed: 2})
	nextPerson, nextAuction := int64(FirstID), int64(FirstID)
	for n := uint64(0); n < 20_000; n++ {
		e := g.Next()
		switch e.Kind {
		case KindPerson:
			if e.Person.ID != nextPerson {
				t.Fatalf("event %d: person id %d, want %d", n, e.Person.ID, nextPerson)
			}
			nextPerson++
		case KindAuction:
			if e.Auction.ID != nextAuction {
				t.Fatalf("event %d: auction id %d, want %d", n, e.Auction.ID, nextAuction)
			}
			nextAuction++
			if e.Auction.Seller < FirstID || e.Auction.Seller >= nextPerson {
				t.Fatalf("event %d: seller %d is not an existing person (< %d)", n, e.Auction.Seller, nextPerson)
			}
			if e.Auction.Category < FirstCategory || e.Auction.Category >= FirstCategory+NumCategories {
				t.Fatalf("event %d: category %d", n, e.Auction.Category)
			}
			if !e.Auction.Expires.After(e.Auction.DateTime) || e.Auction.Reserve <= e.Auction.InitialBid {
				t.Fatalf("event %d: bad auction %+v", n, e.Auction)
			}
		case KindBid:
			if e.Bid.Auction < FirstID || e.Bid.Auction >= nextAuction {
				t.Fatalf("event %d: bid on auction %d, which does not exist yet (< %d)", n, e.Bid.Auction, nextAuction)
			}
			if e.Bid.Bidder < FirstID || e.Bid.Bidder >= nextPerson {
				t.Fatalf("event %d: bidder %d is not an existing person (< %d)", n, e.Bid.Bidder, nextPerson)
			}
			if e.Bid.Price < 100 || e.Bid.Price > 100_000_000 {
				t.Fatalf("event %d: price %d outside $1..$1M", n, e.Bid.Price)
			}
		}
	}
}

func TestDeterministic(t *testing.T) {
	a, b, c := NewGenerator(Config{Seed: 7}), NewGenerator(Config{Seed: 7}), NewGenerator(Config{Seed: 8})
	var ja, jb, jc []byte
	differ := 0
	for n := uint64(0); n < 5000; n++ {
		ja = a.AppendJSON(ja[:0], n)
		jb = b.AppendJSON(jb[:0], n)
		jc = c.AppendJSON(jc[:0], n)
		if !bytes.Equal(ja, jb) {
			t.Fatalf("event %d differs for the same seed:\n%s\n%s", n, ja, jb)
		}
		if !bytes.Equal(ja, jc) {
			differ++
		}
	}
	if differ < 4900 {
		t.Errorf("seeds 7 and 8 gave %d of 5000 different events", differ)
	}
	// Random access equals sequential generation.
	g := NewGenerator(Config{Seed: 7})
	g.Seek(4321)
	e := g.Next()
	if got := a.Event(4321); got.N != e.N || *got.Bid != *e.Bid {
		t.Fatalf("Seek/Next and Event disagree: %+v vs %+v", got.Bid, e.Bid)
	}
}

// TestJSONMatchesEvent checks that the JSON is valid, has the schema's
// fields and says what Event says.
func TestJSONMatchesEvent(t *testing.T) {
	g := NewGenerator(Config{Seed: 3})
	var buf []byte
	for n := uint64(0); n < 500; n++ {
		buf = g.AppendJSON(buf[:0], n)
		var m map[string]any
		if err := json.Unmarshal(buf, &m); err != nil {
			t.Fatalf("event %d: %v: %s", n, err, buf)
		}
		e := g.Event(n)
		ms := func(x time.Time) float64 { return float64(x.UnixMilli()) }
		var want map[string]any
		switch e.Kind {
		case KindPerson:
			p := e.Person
			want = map[string]any{"id": float64(p.ID), "name": p.Name, "email_address": p.EmailAddress, "credit_card": p.CreditCard,
				"city": p.City, "state": p.State, "date_time": ms(p.DateTime), "extra": p.Extra}
		case KindAuction:
			a := e.Auction
			want = map[string]any{"id": float64(a.ID), "item_name": a.ItemName, "description": a.Description,
				"initial_bid": float64(a.InitialBid), "reserve": float64(a.Reserve), "date_time": ms(a.DateTime),
				"expires": ms(a.Expires), "seller": float64(a.Seller), "category": float64(a.Category), "extra": a.Extra}
		case KindBid:
			b := e.Bid
			want = map[string]any{"auction": float64(b.Auction), "bidder": float64(b.Bidder), "price": float64(b.Price),
				"channel": b.Channel, "url": b.URL, "date_time": ms(b.DateTime), "extra": b.Extra}
		}
		if len(m) != len(want) {
			t.Fatalf("event %d: fields %v, want %v", n, m, want)
		}
		for k, v := range want {
			if m[k] != v {
				t.Fatalf("event %d: %s = %v, want %v (%s)", n, k, m[k], v, buf)
			}
		}
	}
}

func TestAverageSizes(t *testing.T) {
	g := NewGenerator(Config{Seed: 4})
	var sum, cnt, jsonSum [3]float64
	var buf []byte
	for n := uint64(0); n < 200_000; n++ {
		k := KindOf(n)
		sum[k] += float64(g.Size(n))
		buf = g.AppendJSON(buf[:0], n)
		jsonSum[k] += float64(len(buf))
		cnt[k]++
	}
	for k, want := range []float64{200, 500, 100} {
		avg := sum[k] / cnt[k]
		t.Logf("%v: mean size %.1f bytes (JSON %.1f bytes)", Kind(k), avg, jsonSum[k]/cnt[k])
		if math.Abs(avg-want) > want*0.03 {
			t.Errorf("%v: mean size %.1f, want about %.0f", Kind(k), avg, want)
		}
	}
}

func TestHotRatios(t *testing.T) {
	for _, cfg := range []Config{{Seed: 5}, {Seed: 5, HotAuctionRatio: 10, HotBidderRatio: 2, HotSellerRatio: 1}} {
		g := NewGenerator(cfg)
		c := g.Config()
		var bids, hotAuction, hotBidder, auctions, hotSeller float64
		for n := uint64(0); n < 300_000; n++ {
			e := g.Event(n)
			newestP := PersonID(n)
			hotP := FirstID + (newestP-FirstID)/hotGroup*hotGroup
			switch e.Kind {
			case KindBid:
				bids++
				newestA := AuctionID(n)
				if e.Bid.Auction == FirstID+(newestA-FirstID)/hotGroup*hotGroup {
					hotAuction++
				}
				if e.Bid.Bidder == min(newestP, hotP+1) {
					hotBidder++
				}
			case KindAuction:
				auctions++
				if e.Auction.Seller == hotP {
					hotSeller++
				}
			}
		}
		check := func(what string, got float64, ratio int) {
			want := 1 - 1/float64(ratio)
			t.Logf("%s: %.3f of events (configured %.3f)", what, got, want)
			// A non-hot pick may hit the hot id by chance (1 in 100 auctions,
			// up to 1 in 1000 people), hence the one-sided slack.
			if got < want-0.01 || got > want+0.03 {
				t.Errorf("%s: fraction %.3f, want about %.3f", what, got, want)
			}
		}
		check("hot auction", hotAuction/bids, c.HotAuctionRatio)
		check("hot bidder", hotBidder/bids, c.HotBidderRatio)
		check("hot seller", hotSeller/auctions, c.HotSellerRatio)
	}
}

func TestTimestampsInOrder(t *testing.T) {
	g := NewGenerator(Config{Seed: 6, EventRate: 1000})
	prev := int64(math.MinInt64)
	for n := uint64(0); n < 10_000; n++ {
		e := g.Next()
		var ts time.Time
		switch e.Kind {
		case KindPerson:
			ts = e.Person.DateTime
		case KindAuction:
			ts = e.Auction.DateTime
		case KindBid:
			ts = e.Bid.DateTime
		}
		if ts.UnixMilli() < prev {
			t.Fatalf("event %d: time %v before the previous event's", n, ts)
		}
		prev = ts.UnixMilli()
	}
	// 10000 events at 1000/s span 10 s of event time.
	if want := g.Config().BaseTime.Add(9999 * time.Millisecond).UnixMilli(); prev != want {
		t.Errorf("last timestamp %d, want %d", prev, want)
	}
}

func TestAppendJSONAllocs(t *testing.T) {
	g := NewGenerator(Config{Seed: 9})
	buf := make([]byte, 0, 4096)
	n := uint64(0)
	allocs := testing.AllocsPerRun(1000, func() {
		buf = g.AppendJSON(buf[:0], n)
		n++
	})
	if allocs != 0 {
		t.Errorf("AppendJSON allocates %.1f times per event", allocs)
	}
}

func BenchmarkAppendJSON(b *testing.B) {
	g := NewGenerator(Config{Seed: 1})
	buf := make([]byte, 0, 4096)
	var bytes int
	for i := 0; i < b.N; i++ {
		buf = g.AppendJSON(buf[:0], uint64(i))
		bytes += len(buf)
	}
	b.SetBytes(int64(bytes / max(b.N, 1)))
}

func TestCount(t *testing.T) {
	var c [3]uint64
	for n := uint64(0); n < 500; n++ {
		for k := range c {
			if got := Count(Kind(k), n); got != c[k] {
				t.Fatalf("Count(%v, %d) = %d, want %d", Kind(k), n, got, c[k])
			}
		}
		c[KindOf(n)]++
	}
}
