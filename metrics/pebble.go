package metrics

import (
	"strconv"

	"github.com/cockroachdb/pebble/v2"
	"github.com/prometheus/client_golang/prometheus"
)

// pebbleCollector reads Pebble's own metrics when scraped. The database is
// asked for each time (db), since a rollback replaces the open one.
type pebbleCollector struct {
	db func() *pebble.DB

	compactions, compactionDebt, compactionsInProgress *prometheus.Desc
	flushes                                            *prometheus.Desc
	levelTables, levelBytes                            *prometheus.Desc
	l0Sublevels                                        *prometheus.Desc
	walFiles, walBytes, walWritten                     *prometheus.Desc
	cacheBytes, cacheHits, cacheMisses                 *prometheus.Desc
	diskUsage                                          *prometheus.Desc
}

// RegisterPebble adds Pebble's metrics (compactions, levels, WAL, block
// cache, disk use) to Registry. db returns the open database, or nil while
// none is.
func RegisterPebble(db func() *pebble.DB) {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("streamdb_pebble_"+name, help, labels, nil)
	}
	Registry.MustRegister(&pebbleCollector{
		db:                    db,
		compactions:           d("compactions_total", "Compactions Pebble has run since the state store opened."),
		compactionDebt:        d("compaction_debt_bytes", "Pebble's estimate of the bytes to compact for the LSM to be stable."),
		compactionsInProgress: d("compactions_in_progress", "Compactions running now."),
		flushes:               d("flushes_total", "Memtable flushes since the state store opened."),
		levelTables:           d("level_sstables", "Sstables in each LSM level.", "level"),
		levelBytes:            d("level_bytes", "Bytes of sstables in each LSM level.", "level"),
		l0Sublevels:           d("l0_sublevels", "Sublevels of L0 (read amplification from L0)."),
		walFiles:              d("wal_files", "Live WAL files."),
		walBytes:              d("wal_bytes", "Physical size of the live WAL files."),
		walWritten:            d("wal_written_bytes_total", "Bytes written to the WAL."),
		cacheBytes:            d("block_cache_bytes", "Bytes in the block cache."),
		cacheHits:             d("block_cache_hits_total", "Block cache hits."),
		cacheMisses:           d("block_cache_misses_total", "Block cache misses."),
		diskUsage:             d("disk_usage_bytes", "Disk space the state store uses (sstables, WAL, manifests)."),
	})
}

func (c *pebbleCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.compactions, c.compactionDebt, c.compactionsInProgress, c.flushes,
		c.levelTables, c.levelBytes, c.l0Sublevels, c.walFiles, c.walBytes, c.walWritten,
		c.cacheBytes, c.cacheHits, c.cacheMisses, c.diskUsage} {
		ch <- d
	}
}

func (c *pebbleCollector) Collect(ch chan<- prometheus.Metric) {
	db := c.db()
	if db == nil {
		return
	}
	m := db.Metrics()
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter(c.compactions, float64(m.Compact.Count))
	gauge(c.compactionDebt, float64(m.Compact.EstimatedDebt))
	gauge(c.compactionsInProgress, float64(m.Compact.NumInProgress))
	counter(c.flushes, float64(m.Flush.Count))
	for i, l := range m.Levels {
		level := strconv.Itoa(i)
		gauge(c.levelTables, float64(l.TablesCount), level)
		gauge(c.levelBytes, float64(l.TablesSize), level)
	}
	gauge(c.l0Sublevels, float64(m.Levels[0].Sublevels))
	gauge(c.walFiles, float64(m.WAL.Files))
	gauge(c.walBytes, float64(m.WAL.PhysicalSize))
	counter(c.walWritten, float64(m.WAL.BytesWritten))
	gauge(c.cacheBytes, float64(m.BlockCache.Size))
	counter(c.cacheHits, float64(m.BlockCache.Hits))
	counter(c.cacheMisses, float64(m.BlockCache.Misses))
	gauge(c.diskUsage, float64(m.DiskSpaceUsage()))
}
