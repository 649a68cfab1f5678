// Package nexmark generates the events of the Nexmark benchmark: an online
// auction where people register (Person), open auctions (Auction) and bid
// (Bid). It follows the public Nexmark model (Tucker et al., "NEXMark – A
// Benchmark for Queries over Data Streams", and its widely used streaming
// adaptation): out of every 50 events one is a Person, three are Auctions
// and 46 are Bids; person and auction ids count up from 1000; a share of
// bids go to a few "hot" auctions and come from a few "hot" bidders, and a
// share of auctions come from "hot" sellers; prices are log-uniform; event
// timestamps are in order at a configured event rate; an `extra` field pads
// each kind of record to a configured average size.
//
// Every event is a pure function of (Config, n): event n draws its random
// choices from a generator seeded with (Seed, n), so any range of events can
// be produced in any order, by any number of goroutines, with identical
// results. AppendJSON renders event n without allocating.
package nexmark

import (
	"fmt"
	"time"
)

// Kind is the type of an event.
type Kind uint8

const (
	KindPerson Kind = iota
	KindAuction
	KindBid
)

func (k Kind) String() string {
	switch k {
	case KindPerson:
		return "person"
	case KindAuction:
		return "auction"
	case KindBid:
		return "bid"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Proportions of the standard model: in each block of 50 consecutive events
// (by event number) offset 0 is a Person, offsets 1-3 Auctions, the rest Bids.
const (
	personProportion  = 1
	auctionProportion = 3
	bidProportion     = 46
	proportionDenom   = personProportion + auctionProportion + bidProportion // 50
)

// FirstID is the id of the first person and of the first auction.
const FirstID = 1000

// Model constants from the public Nexmark description.
const (
	// hotGroup: the hot auction (bidder, seller) is the first id of the
	// newest block of hotGroup ids, so it changes every hotGroup ids.
	hotGroup = 100
	// activePeople: a non-hot bidder or seller is one of the newest
	// activePeople people.
	activePeople = 1000
	// inFlightAuctions: a non-hot bid goes to one of the newest
	// inFlightAuctions auctions.
	inFlightAuctions = 100
	// FirstCategory and NumCategories: auction categories are 10..14.
	FirstCategory = 10
	NumCategories = 5
)

// Config parameterises a generator. The zero value of a field takes the
// default noted on it (see Defaults).
type Config struct {
	// Seed makes the stream reproducible: the same Seed gives the same events.
	Seed uint64
	// EventRate is the event-time rate in events per second: event n is
	// stamped BaseTime + n/EventRate. It is independent of how fast events
	// are published. Default 10000.
	EventRate int
	// BaseTime is the event time of event 0. Default 2026-01-01 00:00:00 UTC.
	BaseTime time.Time
	// HotAuctionRatio, HotBidderRatio, HotSellerRatio: a bid goes to the hot
	// auction with probability 1-1/HotAuctionRatio, comes from the hot bidder
	// with probability 1-1/HotBidderRatio, and an auction comes from the hot
	// seller with probability 1-1/HotSellerRatio. A ratio of 1 turns hotness
	// off. Defaults 2, 4 and 4 as in the standard configuration.
	HotAuctionRatio, HotBidderRatio, HotSellerRatio int
	// AvgPersonSize, AvgAuctionSize, AvgBidSize are the average record sizes
	// in bytes that `extra` pads to, counted as Nexmark does: 8 bytes per
	// number or timestamp plus the bytes of each string. Defaults 200, 500,
	// 100. (The JSON text is larger: it adds field names and punctuation.)
	AvgPersonSize, AvgAuctionSize, AvgBidSize int
	// AuctionLength is the mean time from an auction's date_time to its
	// expires; each auction draws uniformly from [AuctionLength/2,
	// 3*AuctionLength/2]. Default 10s.
	AuctionLength time.Duration
}

// Defaults returns cfg with every zero field set to its default.
func (cfg Config) Defaults() Config {
	def := func(p *int, v int) {
		if *p <= 0 {
			*p = v
		}
	}
	def(&cfg.EventRate, 10_000)
	def(&cfg.HotAuctionRatio, 2)
	def(&cfg.HotBidderRatio, 4)
	def(&cfg.HotSellerRatio, 4)
	def(&cfg.AvgPersonSize, 200)
	def(&cfg.AvgAuctionSize, 500)
	def(&cfg.AvgBidSize, 100)
	if cfg.BaseTime.IsZero() {
		cfg.BaseTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	if cfg.AuctionLength <= 0 {
		cfg.AuctionLength = 10 * time.Second
	}
	return cfg
}

// KindOf returns the kind of event n.
func KindOf(n uint64) Kind {
	switch r := n % proportionDenom; {
	case r < personProportion:
		return KindPerson
	case r < personProportion+auctionProportion:
		return KindAuction
	default:
		return KindBid
	}
}

// PersonID returns the id of the newest person among events 0..n (event n
// itself when it is a Person).
func PersonID(n uint64) int64 {
	return FirstID + int64(n/proportionDenom)
}

// AuctionID returns the id of the newest auction among events 0..n (event
// n itself when it is an Auction); FirstID-1 when there is none yet.
func AuctionID(n uint64) int64 {
	block, r := n/proportionDenom, n%proportionDenom
	inBlock := min(r, auctionProportion) // auctions at offsets 1..3 of this block up to r
	return FirstID + int64(block*auctionProportion+inBlock) - 1
}

// Person is a new user of the auction site.
type Person struct {
	ID           int64
	Name         string
	EmailAddress string
	CreditCard   string
	City         string
	State        string
	DateTime     time.Time
	Extra        string
}

// Auction is an item put up for sale by Seller.
type Auction struct {
	ID          int64
	ItemName    string
	Description string
	InitialBid  int64
	Reserve     int64
	DateTime    time.Time
	Expires     time.Time
	Seller      int64
	Category    int64
	Extra       string
}

// Bid is a bid by Bidder on Auction; Price is in cents.
type Bid struct {
	Auction  int64
	Bidder   int64
	Price    int64
	Channel  string
	URL      string
	DateTime time.Time
	Extra    string
}

// Event is one generated event; exactly one of Person, Auction, Bid is set,
// as Kind says.
type Event struct {
	N       uint64
	Kind    Kind
	Person  *Person
	Auction *Auction
	Bid     *Bid
}

// Generator produces events 0, 1, 2, ... of a Config.
type Generator struct {
	cfg  Config
	next uint64
	buf  []byte
}

// NewGenerator returns a generator positioned at event 0.
func NewGenerator(cfg Config) *Generator {
	return &Generator{cfg: cfg.Defaults()}
}

// Config returns the generator's configuration with defaults applied.
func (g *Generator) Config() Config { return g.cfg }

// Seek positions the generator so that Next returns event n.
func (g *Generator) Seek(n uint64) { g.next = n }

// Next returns the next event and advances.
func (g *Generator) Next() Event {
	e := g.Event(g.next)
	g.next++
	return e
}

// Event returns event n (it does not move the generator). It allocates the
// record and its strings; AppendJSON does not.
func (g *Generator) Event(n uint64) Event {
	var r record
	g.fill(&r, n)
	e := Event{N: n, Kind: r.kind}
	str := func(f func([]byte, *record) []byte) string {
		g.buf = f(g.buf[:0], &r)
		return string(g.buf)
	}
	switch r.kind {
	case KindPerson:
		e.Person = &Person{ID: r.id, Name: str(appendName), EmailAddress: str(appendEmail),
			CreditCard: str(appendCard), City: cities[r.city], State: states[r.state],
			DateTime: time.UnixMilli(r.ts).UTC(), Extra: str(appendExtra)}
	case KindAuction:
		e.Auction = &Auction{ID: r.id, ItemName: str(appendItem), Description: str(appendDescription),
			InitialBid: r.price, Reserve: r.reserve, DateTime: time.UnixMilli(r.ts).UTC(),
			Expires: time.UnixMilli(r.expires).UTC(), Seller: r.other, Category: r.category,
			Extra: str(appendExtra)}
	case KindBid:
		e.Bid = &Bid{Auction: r.id, Bidder: r.other, Price: r.price, Channel: channels[r.channel],
			URL: str(appendURL), DateTime: time.UnixMilli(r.ts).UTC(), Extra: str(appendExtra)}
	}
	return e
}

// Kind returns the kind of event n.
func (g *Generator) Kind(n uint64) Kind { return KindOf(n) }

// Timestamp returns the event time of event n in epoch milliseconds.
func (g *Generator) Timestamp(n uint64) int64 {
	rate := uint64(g.cfg.EventRate)
	// n*1000/rate without overflow for any realistic n.
	return g.cfg.BaseTime.UnixMilli() + int64(n/rate*1000+n%rate*1000/rate)
}
