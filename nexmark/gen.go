package nexmark

import (
	"math"
	"strconv"
)

// Value tables. Names, cities and states follow the flavour of the public
// model: US states AZ, CA, ID, OR, WA, WY (Nexmark q3 selects OR, ID, CA).
var (
	firstNames = []string{"Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter"}
	lastNames  = []string{"Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris"}
	lastLower  = []string{"shultz", "abrams", "spencer", "white", "bartels", "walton", "smith", "jones", "noris"}
	domains    = []string{"gmail.com", "yahoo.com", "example.org", "mail.net"}
	cities     = []string{"Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland", "Bend", "Redmond", "Seattle", "Kent", "Cheyenne"}
	states     = []string{"AZ", "CA", "ID", "OR", "WA", "WY"}
	channels   = []string{"Google", "Facebook", "Baidu", "Apple"}
	itemWords  = []string{"vintage", "antique", "rare", "signed", "lamp", "chair", "guitar", "watch", "bicycle", "camera", "vase", "print", "coin", "stamp", "book", "record"}
)

const (
	urlPrefix = "https://www.nexmark.com/"
	urlSuffix = "/item.htm?query=1"
	urlToken  = 5  // random letters between prefix and suffix
	cardLen   = 19 // "dddd dddd dddd dddd"
	emailNum  = 3  // digits after the last name in an e-mail address
)

// rng is a splitmix64 generator: tiny, fast and good enough for a
// workload generator. Each event gets its own, seeded from (Seed, n).
type rng struct{ s uint64 }

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// intn returns a number in [0, n) for 0 < n < 2^32 (multiply-shift; the bias
// is below 2^-32 and irrelevant here).
func (r *rng) intn(n int) int { return int((r.next() >> 32) * uint64(n) >> 32) }

// float returns a number in [0, 1).
func (r *rng) float() float64 { return float64(r.next()>>11) / (1 << 53) }

// eventRNG seeds event n's generator from the configured seed and n.
func eventRNG(seed, n uint64) rng {
	r := rng{s: seed ^ 0x6a09e667f3bcc909}
	r.s = r.next() ^ n*0xd1b54a32d192ed03
	r.next()
	return r
}

// record is event n reduced to numbers: every string is an index into a
// table or a length plus a seed for its letters, so that rendering it
// needs no allocation and its size is known before it is rendered.
type record struct {
	kind     Kind
	id       int64 // person id, auction id, or a bid's auction
	other    int64 // an auction's seller or a bid's bidder
	ts       int64 // epoch ms
	expires  int64 // epoch ms, auctions
	price    int64 // a bid's price or an auction's initial bid, in cents
	reserve  int64
	category int64
	first    uint8 // person: name, email
	last     uint8
	domain   uint8
	city     uint8
	state    uint8
	channel  uint8
	words    [3]uint8 // auction item name: nWords words of itemWords
	nWords   uint8
	descLen  int
	extraLen int
	seed     uint64 // letters and digits of the random strings
}

// fill computes event n.
func (g *Generator) fill(r *record, n uint64) {
	cfg := &g.cfg
	rn := eventRNG(cfg.Seed, n)
	r.kind = KindOf(n)
	r.ts = g.Timestamp(n)
	r.seed = rn.next()
	var fixed, avg int
	switch r.kind {
	case KindPerson:
		r.id = PersonID(n)
		r.first = uint8(rn.intn(len(firstNames)))
		r.last = uint8(rn.intn(len(lastNames)))
		r.domain = uint8(rn.intn(len(domains)))
		r.city = uint8(rn.intn(len(cities)))
		r.state = uint8(rn.intn(len(states)))
		fixed = 8 + nameLen(r) + emailLen(r) + cardLen + len(cities[r.city]) + len(states[r.state]) + 8
		avg = cfg.AvgPersonSize
	case KindAuction:
		r.id = AuctionID(n)
		r.other = pickPerson(&rn, PersonID(n), cfg.HotSellerRatio, 0)
		r.category = FirstCategory + int64(rn.intn(NumCategories))
		r.price = logUniformPrice(&rn)
		r.reserve = r.price + logUniformPrice(&rn)
		l := cfg.AuctionLength.Milliseconds()
		r.expires = r.ts + l/2 + int64(rn.intn(int(l)+1))
		r.nWords = uint8(1 + rn.intn(len(r.words)))
		for i := range r.nWords {
			r.words[i] = uint8(rn.intn(len(itemWords)))
		}
		r.descLen = 20 + rn.intn(41)
		fixed = 7*8 + itemLen(r) + r.descLen
		avg = cfg.AvgAuctionSize
	case KindBid:
		last := AuctionID(n)
		if hot(&rn, cfg.HotAuctionRatio) {
			r.id = FirstID + (last-FirstID)/hotGroup*hotGroup
		} else {
			lo := max(FirstID, last-inFlightAuctions+1)
			r.id = lo + int64(rn.intn(int(last-lo+1)))
		}
		r.other = pickPerson(&rn, PersonID(n), cfg.HotBidderRatio, 1)
		r.price = logUniformPrice(&rn)
		r.channel = uint8(rn.intn(len(channels)))
		fixed = 4*8 + len(channels[r.channel]) + len(urlPrefix) + urlToken + len(urlSuffix)
		avg = cfg.AvgBidSize
	}
	// Pad to the average size: extra's length is uniform in
	// [0.8*delta, 1.2*delta], so the mean record size is avg.
	r.extraLen = 0
	if delta := avg - fixed; delta > 0 {
		r.extraLen = delta*4/5 + rn.intn(delta*2/5+1)
	}
}

// hot reports whether this choice goes to the hot id: probability
// 1-1/ratio.
func hot(rn *rng, ratio int) bool { return ratio > 1 && rn.intn(ratio) > 0 }

// pickPerson chooses a seller or bidder when newest is the newest person:
// the hot one (the first of the newest block of hotGroup ids, plus offset so
// that hot bidders and hot sellers differ) with probability 1-1/ratio,
// otherwise one of the newest activePeople people.
func pickPerson(rn *rng, newest int64, ratio int, offset int64) int64 {
	if hot(rn, ratio) {
		return min(newest, FirstID+(newest-FirstID)/hotGroup*hotGroup+offset)
	}
	lo := max(FirstID, newest-activePeople+1)
	return lo + int64(rn.intn(int(newest-lo+1)))
}

// logUniformPrice returns a price in cents whose logarithm is uniform:
// $1 to $1,000,000.
func logUniformPrice(rn *rng) int64 {
	return int64(math.Round(math.Pow(10, rn.float()*6) * 100))
}

func nameLen(r *record) int { return len(firstNames[r.first]) + 1 + len(lastNames[r.last]) }
func emailLen(r *record) int {
	return len(lastLower[r.last]) + emailNum + 1 + len(domains[r.domain])
}
func itemLen(r *record) int {
	n := int(r.nWords) - 1
	for i := range r.nWords {
		n += len(itemWords[r.words[i]])
	}
	return n
}

// size returns the record's size as Nexmark counts it: 8 bytes per number
// or timestamp plus the bytes of every string.
func (r *record) size() int {
	switch r.kind {
	case KindPerson:
		return 8 + nameLen(r) + emailLen(r) + cardLen + len(cities[r.city]) + len(states[r.state]) + 8 + r.extraLen
	case KindAuction:
		return 7*8 + itemLen(r) + r.descLen + r.extraLen
	default:
		return 4*8 + len(channels[r.channel]) + len(urlPrefix) + urlToken + len(urlSuffix) + r.extraLen
	}
}

// Sub-seeds so that each random string has its own letters.
const (
	seedEmail = 1 + iota
	seedCard
	seedDesc
	seedURL
	seedExtra
)

// appendLetters appends n lowercase letters drawn from seed.
func appendLetters(dst []byte, seed uint64, n int) []byte {
	rn := rng{s: seed}
	for n > 0 {
		x := rn.next()
		// 12 letters from one 64-bit draw, 5 bits each (26 of 32 values
		// map to distinct letters; the rest fold back, skewing a few).
		for i := 0; i < 12 && n > 0; i++ {
			dst = append(dst, 'a'+byte((x&31)%26))
			x >>= 5
			n--
		}
	}
	return dst
}

// appendDigits appends n decimal digits drawn from seed.
func appendDigits(dst []byte, seed uint64, n int) []byte {
	rn := rng{s: seed}
	for i := 0; i < n; i++ {
		dst = append(dst, '0'+byte(rn.intn(10)))
	}
	return dst
}

func appendName(dst []byte, r *record) []byte {
	dst = append(dst, firstNames[r.first]...)
	dst = append(dst, ' ')
	return append(dst, lastNames[r.last]...)
}

func appendEmail(dst []byte, r *record) []byte {
	dst = append(dst, lastLower[r.last]...)
	dst = appendDigits(dst, r.seed+seedEmail, emailNum)
	dst = append(dst, '@')
	return append(dst, domains[r.domain]...)
}

func appendCard(dst []byte, r *record) []byte {
	rn := rng{s: r.seed + seedCard}
	for i := 0; i < 4; i++ {
		if i > 0 {
			dst = append(dst, ' ')
		}
		dst = appendDigits(dst, rn.next(), 4)
	}
	return dst
}

func appendItem(dst []byte, r *record) []byte {
	for i := range r.nWords {
		if i > 0 {
			dst = append(dst, ' ')
		}
		dst = append(dst, itemWords[r.words[i]]...)
	}
	return dst
}

func appendDescription(dst []byte, r *record) []byte {
	return appendLetters(dst, r.seed+seedDesc, r.descLen)
}

func appendURL(dst []byte, r *record) []byte {
	dst = append(dst, urlPrefix...)
	dst = appendLetters(dst, r.seed+seedURL, urlToken)
	return append(dst, urlSuffix...)
}

func appendExtra(dst []byte, r *record) []byte {
	return appendLetters(dst, r.seed+seedExtra, r.extraLen)
}

// AppendJSON appends event n as one JSON object (no newline) in the
// field names of the Nexmark schema, timestamps as epoch milliseconds:
//
//	person:  id, name, email_address, credit_card, city, state, date_time, extra
//	auction: id, item_name, description, initial_bid, reserve, date_time, expires, seller, category, extra
//	bid:     auction, bidder, price, channel, url, date_time, extra
//
// Every string is plain ASCII without quotes or backslashes, so nothing is
// escaped. It does not allocate beyond growing dst.
func (g *Generator) AppendJSON(dst []byte, n uint64) []byte {
	var r record
	g.fill(&r, n)
	return appendRecordJSON(dst, &r)
}

// Size returns event n's size in bytes as Nexmark counts it (8 per number
// or timestamp plus string bytes); the padding aims its mean at the
// configured average.
func (g *Generator) Size(n uint64) int {
	var r record
	g.fill(&r, n)
	return r.size()
}

func appendRecordJSON(dst []byte, r *record) []byte {
	str := func(dst []byte, key string, f func([]byte, *record) []byte) []byte {
		dst = append(dst, key...)
		dst = append(dst, '"')
		dst = f(dst, r)
		return append(dst, '"')
	}
	lit := func(dst []byte, key, s string) []byte {
		dst = append(dst, key...)
		dst = append(dst, '"')
		dst = append(dst, s...)
		return append(dst, '"')
	}
	num := func(dst []byte, key string, v int64) []byte {
		dst = append(dst, key...)
		return strconv.AppendInt(dst, v, 10)
	}
	switch r.kind {
	case KindPerson:
		dst = num(dst, `{"id":`, r.id)
		dst = str(dst, `,"name":`, appendName)
		dst = str(dst, `,"email_address":`, appendEmail)
		dst = str(dst, `,"credit_card":`, appendCard)
		dst = lit(dst, `,"city":`, cities[r.city])
		dst = lit(dst, `,"state":`, states[r.state])
		dst = num(dst, `,"date_time":`, r.ts)
	case KindAuction:
		dst = num(dst, `{"id":`, r.id)
		dst = str(dst, `,"item_name":`, appendItem)
		dst = str(dst, `,"description":`, appendDescription)
		dst = num(dst, `,"initial_bid":`, r.price)
		dst = num(dst, `,"reserve":`, r.reserve)
		dst = num(dst, `,"date_time":`, r.ts)
		dst = num(dst, `,"expires":`, r.expires)
		dst = num(dst, `,"seller":`, r.other)
		dst = num(dst, `,"category":`, r.category)
	case KindBid:
		dst = num(dst, `{"auction":`, r.id)
		dst = num(dst, `,"bidder":`, r.other)
		dst = num(dst, `,"price":`, r.price)
		dst = lit(dst, `,"channel":`, channels[r.channel])
		dst = str(dst, `,"url":`, appendURL)
		dst = num(dst, `,"date_time":`, r.ts)
	}
	dst = str(dst, `,"extra":`, appendExtra)
	return append(dst, '}')
}
