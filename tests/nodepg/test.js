'use strict';
// Checks the node-postgres driver (pg) against the server at $STREAMDB_DSN.
// With STREAMDB_ENGINE=postgres only the PostgreSQL-compatible checks run,
// so that the script itself can be validated against a real PostgreSQL.
// Prints one line per check and exits non-zero if any check fails.

process.env.TZ = 'UTC'; // pg parses TIMESTAMP (without zone) as local time

const assert = require('node:assert/strict');
const { Client } = require('pg');

// PostgreSQL type OIDs.
const INT4 = 23;
const INT8 = 20;
const TEXT = 25;
const TIMESTAMP = 1114;
const NUMERIC = 1700;

const dsn = process.env.STREAMDB_DSN;
const engine = process.env.STREAMDB_ENGINE || 'streamdb';

let failures = 0;

async function check(name, fn) {
  try {
    await fn();
    console.log(`ok - ${name}`);
  } catch (err) {
    failures++;
    console.log(`not ok - ${name}\n  ${String(err && err.stack || err).replace(/\n/g, '\n  ')}`);
  }
}

async function compatibleChecks(client) {
  await check('simple query: SELECT 1 AS one', async () => {
    const res = await client.query('SELECT 1 AS one');
    assert.equal(res.fields[0].name, 'one');
    assert.equal(res.fields[0].dataTypeID, INT4);
    assert.deepEqual(res.rows, [{ one: 1 }]);
  });

  await check('parameters: $1::bigint + $2::bigint', async () => {
    const res = await client.query('SELECT $1::bigint + $2::bigint AS s', [2, 3]);
    assert.equal(res.fields[0].dataTypeID, INT8);
    assert.equal(res.rows[0].s, '5'); // pg returns int8 as a string
    const big = await client.query('SELECT $1::bigint + $2::bigint AS s', ['9007199254740000', '993']);
    assert.equal(big.rows[0].s, '9007199254740993'); // beyond a JS number's precision
  });

  await check('parameters: $1::text', async () => {
    const s = 'héllo wörld, \'quoted\' "twice"';
    const res = await client.query('SELECT $1::text AS t', [s]);
    assert.equal(res.fields[0].dataTypeID, TEXT);
    assert.equal(typeof res.rows[0].t, 'string');
    assert.equal(res.rows[0].t, s);
    const nul = await client.query('SELECT $1::text AS t', [null]);
    assert.equal(nul.rows[0].t, null);
  });

  await check('parameters: $1::timestamp', async () => {
    const when = new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 678));
    const res = await client.query('SELECT $1::timestamp AS ts', [when]);
    assert.equal(res.fields[0].dataTypeID, TIMESTAMP);
    assert.ok(res.rows[0].ts instanceof Date, `want a Date, got ${typeof res.rows[0].ts}`);
    assert.equal(res.rows[0].ts.toISOString(), when.toISOString());
    const fromText = await client.query('SELECT $1::timestamp AS ts', ['2026-11-29 04:00:00']);
    assert.equal(fromText.rows[0].ts.toISOString(), '2026-11-29T04:00:00.000Z');
  });

  await check('numeric: SELECT 1.5::numeric', async () => {
    const res = await client.query('SELECT 1.5::numeric AS n');
    assert.equal(res.fields[0].dataTypeID, NUMERIC);
    assert.equal(res.rows[0].n, '1.5'); // pg returns numeric as a string
  });

  await check('types: bool, float8, date, timestamptz, interval, bytea', async () => {
    const res = await client.query(
      "SELECT true AS b, 2.5::float8 AS f, '2020-02-29'::date AS d, '2020-01-02 03:04:05+02'::timestamptz AS tz, " +
      "'1 day 02:03:04'::interval AS iv, '\\x00ff'::bytea AS bin");
    const r = res.rows[0];
    assert.equal(r.b, true);
    assert.equal(r.f, 2.5);
    assert.ok(r.d instanceof Date);
    assert.equal(r.tz.toISOString(), '2020-01-02T01:04:05.000Z');
    assert.deepEqual({ days: r.iv.days, hours: r.iv.hours, minutes: r.iv.minutes, seconds: r.iv.seconds }, { days: 1, hours: 2, minutes: 3, seconds: 4 });
    assert.deepEqual([...r.bin], [0, 255]);
  });

  await check('arrays: results as JS arrays, JS arrays as parameters', async () => {
    const res = await client.query(`SELECT ARRAY[1,2]::int[] AS a, '{a,"b c",NULL,""}'::text[] AS t, '{1.5}'::float8[] AS f, '{t,f}'::bool[] AS b`);
    assert.deepEqual(res.fields.map((f) => f.dataTypeID), [1007, 1009, 1022, 1000]);
    assert.deepEqual(res.rows[0], { a: [1, 2], t: ['a', 'b c', null, ''], f: [1.5], b: [true, false] });
    const p = await client.query('SELECT $1::int[] AS a, 3 = ANY ($2) AS hit', [[1, 2, 3], [3, 4]]);
    assert.deepEqual(p.rows[0], { a: [1, 2, 3], hit: true });
    const s = await client.query('SELECT $1::text[] AS t', [['x y', null, '"q"']]);
    assert.deepEqual(s.rows[0].t, ['x y', null, '"q"']);
  });

  await check('uuid: results as strings, strings as parameters, uuid[]', async () => {
    const res = await client.query(
      "SELECT $1::uuid AS u, '{A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11,NULL}'::uuid[] AS us, $1::uuid = $2 AS eq",
      ['{A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11}', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11']);
    assert.deepEqual(res.fields.map((f) => f.dataTypeID), [2950, 2951, 16]);
    assert.deepEqual(res.rows[0], {
      u: 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', us: ['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', null], eq: true,
    });
    await assert.rejects(client.query('SELECT $1::uuid AS u', ['nope']), (err) => err.code === '22P02');
  });

  await check('json and jsonb: results as JS values, objects as parameters', async () => {
    const res = await client.query(
      `SELECT '{"b": 1, "a": [1, 2.5, null]}'::json AS j, '{"b": 1, "a": [1, 2.5, null]}'::jsonb AS jb, '"s"'::jsonb AS s, 'null'::jsonb AS n, $1::jsonb ->> 'k' AS k, $2::json AS p`,
      [{ k: 'v é' }, JSON.stringify([1, { x: true }])]);
    assert.deepEqual(res.fields.map((f) => f.dataTypeID), [114, 3802, 3802, 3802, 25, 114]);
    assert.deepEqual(res.rows[0], {
      j: { b: 1, a: [1, 2.5, null] }, jb: { a: [1, 2.5, null], b: 1 }, s: 's', n: null, k: 'v é', p: [1, { x: true }],
    });
    await assert.rejects(client.query('SELECT $1::jsonb AS j', ['{nope']), (err) => err.code === '22P02');
  });

  await check('transactions and a cursor: BEGIN, ROLLBACK, COMMIT, DECLARE, FETCH', async () => {
    await client.query('CREATE TABLE nodepg_tx (id int PRIMARY KEY, tags text[])');
    await client.query('BEGIN');
    await client.query('INSERT INTO nodepg_tx VALUES (1, $1)', [['a']]);
    await client.query('ROLLBACK');
    await client.query('BEGIN');
    await client.query('INSERT INTO nodepg_tx VALUES (2, $1), (3, $2), (4, NULL)', [['b', 'c'], []]);
    await client.query('COMMIT');
    await client.query('BEGIN');
    await client.query('DECLARE c CURSOR FOR SELECT id, tags FROM nodepg_tx ORDER BY id');
    const first = await client.query('FETCH 2 FROM c');
    const rest = await client.query('FETCH ALL FROM c');
    await client.query('COMMIT');
    assert.deepEqual(first.rows, [{ id: 2, tags: ['b', 'c'] }, { id: 3, tags: [] }]);
    assert.deepEqual(rest.rows, [{ id: 4, tags: null }]);
    const tables = await client.query(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_name = 'nodepg_tx'");
    assert.equal(tables.rowCount, 1);
    await client.query('DROP TABLE nodepg_tx');
  });

  await check('COPY FROM STDIN and TO STDOUT (pg-copy-streams)', async () => {
    const { from, to } = require('pg-copy-streams');
    const { pipeline } = require('node:stream/promises');
    const { Readable, Writable } = require('node:stream');
    await client.query('CREATE TABLE nodepg_copy (id int PRIMARY KEY, tags text[])');
    const data = '1\t{a,"b c"}\n2\t\\N\n';
    await pipeline(Readable.from([data]), client.query(from('COPY nodepg_copy FROM STDIN')));
    const chunks = [];
    await pipeline(client.query(to('COPY (SELECT id, tags FROM nodepg_copy ORDER BY id) TO STDOUT')),
      new Writable({ write(c, _enc, cb) { chunks.push(c); cb(); } }));
    assert.equal(Buffer.concat(chunks).toString(), data);
    const res = await client.query('SELECT tags FROM nodepg_copy ORDER BY id');
    assert.deepEqual(res.rows, [{ tags: ['a', 'b c'] }, { tags: null }]);
    await client.query('DROP TABLE nodepg_copy');
  });

  await check('error carries SQLSTATE 42P01', async () => {
    await assert.rejects(client.query('SELECT * FROM no_such_table'), (err) => {
      assert.equal(err.code, '42P01', `code ${err.code}: ${err.message}`);
      assert.match(err.message, /no_such_table/);
      return true;
    });
    const res = await client.query('SELECT 1 AS one'); // the connection is still usable
    assert.equal(res.rows[0].one, 1);
  });
}

async function streamdbChecks(client) {
  await check('stream, materialized view, FLUSH', async () => {
    await client.query('CREATE STREAM nodepg_events (k VARCHAR, v BIGINT)');
    const ins = await client.query("INSERT INTO nodepg_events VALUES ('a', 1), ('b', 2)");
    assert.equal(ins.command, 'INSERT');
    assert.equal(ins.rowCount, 2);
    await client.query(
      'CREATE MATERIALIZED VIEW nodepg_counts AS SELECT k, count(*) AS n FROM nodepg_events GROUP BY k');
    const one = await client.query('INSERT INTO nodepg_events VALUES ($1, $2)', ['a', 3]);
    assert.equal(one.rowCount, 1);
    await client.query('FLUSH');
    const res = await client.query('SELECT k, n FROM nodepg_counts ORDER BY k');
    assert.equal(res.fields[1].dataTypeID, INT8);
    assert.deepEqual(res.rows, [{ k: 'a', n: '2' }, { k: 'b', n: '1' }]);
  });
}

async function main() {
  if (!dsn) {
    console.error('test.js: set STREAMDB_DSN to the server URL, e.g. postgres://streamdb@127.0.0.1:5433/streamdb');
    process.exit(2);
  }
  const client = new Client({ connectionString: dsn });
  client.on('error', (err) => console.error(`connection error: ${err.message}`));
  await client.connect();
  try {
    await compatibleChecks(client);
    if (engine === 'postgres') {
      console.log('skip - streamdb-only checks (STREAMDB_ENGINE=postgres)');
    } else {
      await streamdbChecks(client);
    }
  } finally {
    await client.end();
  }
  if (failures > 0) {
    console.error(`test.js: ${failures} check(s) failed against ${engine}`);
    process.exit(1);
  }
  console.log(`test.js: all checks passed against ${engine}`);
}

main().catch((err) => {
  console.error(`test.js: ${err && err.stack || err}`);
  process.exit(1);
});
