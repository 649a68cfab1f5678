'use strict';
// Runs knex, Sequelize and Kysely against the server at $STREAMDB_DSN: each
// builds its schema through its own migration/schema API, then reads and
// writes rows with transactions that commit and roll back. Prints one line
// per step ("ok - ..." / "not ok - ..."), then the line "ROWS <json>" with
// the final rows of every table the ORMs made, which the Go test compares
// between streamdb and PostgreSQL. Exits non-zero if a step failed.
//
// Values that differ between runs (timestamps, the sequence values after a
// rollback) are reduced to what is deterministic before they are printed.

process.env.TZ = 'UTC';

const assert = require('node:assert/strict');

const dsn = process.env.STREAMDB_DSN;
const only = process.env.ORM; // run one ORM's part only (debugging)

let failures = 0;

async function step(name, fn) {
  try {
    const v = await fn();
    console.log(`ok - ${name}`);
    return v;
  } catch (err) {
    failures++;
    console.log(`not ok - ${name}\n  ${String((err && err.stack) || err).replace(/\n/g, '\n  ')}`);
    return undefined;
  }
}

// rowsOf returns a table's rows ordered by its first column, as plain
// objects with the given columns.
async function rowsOf(pg, table, cols) {
  const res = await pg.query(`SELECT ${cols.join(', ')} FROM ${table} ORDER BY ${cols[0]}`);
  return res.rows;
}

// ---- knex ----------------------------------------------------------------

function knexMigrations() {
  const migrations = {
    '001_users': {
      up: (knex) => knex.schema.createTable('knex_users', (t) => {
        t.increments('id');
        t.string('email', 100).notNullable().unique();
        t.integer('age').defaultTo(18);
        t.boolean('active').notNullable().defaultTo(true);
        t.timestamps(true, true);
      }),
      down: (knex) => knex.schema.dropTable('knex_users'),
    },
    '002_posts': {
      up: (knex) => knex.schema.createTable('knex_posts', (t) => {
        t.increments('id');
        t.integer('user_id').notNullable().references('id').inTable('knex_users').onDelete('CASCADE');
        t.string('title').notNullable();
        t.text('body');
        t.decimal('score', 8, 2).defaultTo(0);
        t.index(['title'], 'knex_posts_title_idx');
      }),
      down: (knex) => knex.schema.dropTable('knex_posts'),
    },
    '003_alter': {
      up: (knex) => knex.schema.alterTable('knex_users', (t) => {
        t.string('nick', 30);
        t.renameColumn('age', 'years');
      }),
      down: (knex) => knex.schema.alterTable('knex_users', (t) => {
        t.renameColumn('years', 'age');
        t.dropColumn('nick');
      }),
    },
    '004_widen': {
      up: (knex) => knex.schema.alterTable('knex_users', (t) => {
        t.string('nick', 60).alter();
        t.bigInteger('years').defaultTo(18).alter();
      }),
      down: (knex) => knex.schema.alterTable('knex_users', (t) => {
        t.string('nick', 60).alter();
      }),
    },
  };
  return {
    getMigrations: async () => Object.keys(migrations),
    getMigrationName: (m) => m,
    getMigration: async (m) => migrations[m],
  };
}

async function runKnex(pg) {
  const knex = require('knex')({ client: 'pg', connection: dsn, pool: { min: 0, max: 2 } });
  try {
    const config = { migrationSource: knexMigrations(), tableName: 'knex_migrations' };
    await step('knex: migrate.latest', async () => {
      const [batch, names] = await knex.migrate.latest(config);
      assert.equal(batch, 1);
      assert.deepEqual(names, ['001_users', '002_posts', '003_alter', '004_widen']);
    });
    await step('knex: migrate.rollback, then migrate.latest again', async () => {
      const [, undone] = await knex.migrate.rollback(config);
      assert.equal(undone.length, 4);
      assert.equal(await knex.schema.hasTable('knex_users'), false);
      const [batch] = await knex.migrate.latest(config);
      assert.equal(batch, 1);
      assert.equal(await knex.schema.hasColumn('knex_users', 'years'), true);
      assert.equal(await knex.schema.hasColumn('knex_users', 'age'), false);
    });
    await step('knex: insert returning the generated ids', async () => {
      const ids = await knex('knex_users').insert([
        { email: 'ann@example.com', years: 31, nick: 'ann' },
        { email: 'bob@example.com' },
      ]).returning('id');
      assert.deepEqual(ids.map((r) => r.id), [1, 2]);
      const [post] = await knex('knex_posts').insert({ user_id: 1, title: 'hello', body: 'first', score: 4.5 }).returning(['id', 'score']);
      assert.equal(post.id, 1);
      assert.equal(post.score, '4.50');
      const bob = await knex('knex_users').where({ email: 'bob@example.com' }).first();
      assert.equal(bob.years, '18'); // bigint, as pg returns it
      assert.equal(bob.active, true);
      assert.ok(bob.created_at instanceof Date);
    });
    await step('knex: a transaction that commits', async () => {
      await knex.transaction(async (trx) => {
        await trx('knex_posts').insert({ user_id: 2, title: 'second', body: null });
        await trx('knex_users').where({ id: 2 }).update({ nick: 'bobby', updated_at: knex.fn.now() });
      });
    });
    await step('knex: a transaction that rolls back', async () => {
      await assert.rejects(knex.transaction(async (trx) => {
        await trx('knex_posts').insert({ user_id: 1, title: 'lost' });
        await trx('knex_posts').insert({ user_id: 99, title: 'no such user' });
      }), (err) => err.code === '23503');
      const lost = await knex('knex_posts').where({ title: 'lost' });
      assert.equal(lost.length, 0);
    });
    await step('knex: constraints answer with PostgreSQL codes', async () => {
      await assert.rejects(knex('knex_users').insert({ email: 'ann@example.com' }), (err) => err.code === '23505');
      await assert.rejects(knex('knex_users').insert({ email: null }), (err) => err.code === '23502');
    });
    await step('knex: update and delete, cascading', async () => {
      const n = await knex('knex_posts').where({ title: 'hello' }).update({ score: knex.raw('score + 1') });
      assert.equal(n, 1);
      const [cat] = await knex('knex_users').insert({ email: 'cat@example.com' }).returning('id');
      await knex('knex_posts').insert({ user_id: cat.id, title: 'cat post' });
      assert.equal(await knex('knex_users').where({ email: 'cat@example.com' }).del(), 1);
      const left = await knex('knex_posts').where({ title: 'cat post' });
      assert.equal(left.length, 0);
    });
    await step('knex: schema introspection (hasTable, columnInfo)', async () => {
      assert.equal(await knex.schema.hasTable('knex_posts'), true);
      const info = await knex('knex_users').columnInfo();
      assert.equal(info.email.type, 'character varying');
      assert.equal(info.email.maxLength, 100);
      assert.equal(info.years.type, 'bigint');
      assert.equal(info.nick.maxLength, 60);
    });
    await step('knex: onConflict().merge() updates the taken key and inserts the new', async () => {
      const rows = await knex('knex_users')
        .insert([{ email: 'ann@example.com', nick: 'annie' }, { email: 'dee@example.com', nick: 'dee' }])
        .onConflict('email').merge(['nick']).returning(['email', 'nick']);
      assert.deepEqual(rows.map((r) => [r.email, r.nick]), [['ann@example.com', 'annie'], ['dee@example.com', 'dee']]);
      const ann = await knex('knex_users').where({ email: 'ann@example.com' }).first();
      assert.equal(ann.id, 1);
      assert.equal(ann.years, '31');
    });
  } finally {
    await knex.destroy();
  }
  return {
    knex_users: await rowsOf(pg, 'knex_users', ['id', 'email', 'years', 'active', 'nick', '(created_at IS NOT NULL) AS created']),
    knex_posts: await rowsOf(pg, 'knex_posts', ['id', 'user_id', 'title', 'body', 'score']),
    knex_migrations: await rowsOf(pg, 'knex_migrations', ['name', 'batch']),
  };
}

// ---- Sequelize ------------------------------------------------------------

async function runSequelize(pg) {
  const { Sequelize, DataTypes } = require('sequelize');
  const sequelize = new Sequelize(dsn, { logging: false, timezone: '+00:00', pool: { max: 2 } });
  try {
    const Author = sequelize.define('Author', {
      name: { type: DataTypes.STRING(50), allowNull: false, unique: true },
      born: { type: DataTypes.DATEONLY },
    }, { tableName: 'sq_authors' });
    const Book = sequelize.define('Book', {
      title: { type: DataTypes.STRING, allowNull: false },
      pages: { type: DataTypes.INTEGER, validate: { min: 1 } },
      price: { type: DataTypes.DECIMAL(10, 2) },
    }, { tableName: 'sq_books', indexes: [{ name: 'sq_books_title', fields: ['title'] }] });
    Author.hasMany(Book, { foreignKey: 'authorId', onDelete: 'CASCADE' });
    Book.belongsTo(Author, { foreignKey: 'authorId' });

    await step('sequelize: authenticate', () => sequelize.authenticate());
    await step('sequelize: sync()', () => sequelize.sync());
    await step('sequelize: sync({ force: true }) drops and creates the tables again', () => sequelize.sync({ force: true }));
    await step('sequelize: sync() again changes nothing', () => sequelize.sync());
    const qi = sequelize.getQueryInterface();
    await step('sequelize: queryInterface migration (addColumn, addIndex, changeColumn)', async () => {
      await qi.addColumn('sq_books', 'isbn', { type: DataTypes.STRING(20), allowNull: true });
      await qi.addIndex('sq_books', ['isbn'], { name: 'sq_books_isbn', unique: true });
      await qi.changeColumn('sq_books', 'isbn', { type: DataTypes.STRING(40), allowNull: true });
      const desc = await qi.describeTable('sq_books');
      assert.equal(desc.isbn.type, 'CHARACTER VARYING(40)');
      assert.equal(desc.authorId.type, 'INTEGER');
      const indexes = await qi.showIndex('sq_books');
      assert.deepEqual(indexes.map((x) => [x.name, x.primary, x.unique, x.fields.map((f) => f.attribute).join()]), [
        ['sq_books_isbn', false, true, 'isbn'],
        ['sq_books_pkey', true, true, 'id'],
        ['sq_books_title', false, false, 'title'],
      ]);
    });
    await step('sequelize: create with associations', async () => {
      const ann = await Author.create({ name: 'Ann', born: '1970-05-01' });
      assert.equal(ann.id, 1);
      await Book.create({ title: 'First', pages: 100, price: '9.99', authorId: ann.id });
      await Author.create({ name: 'Bob', Books: [{ title: 'Bob one', pages: 10 }] }, { include: [Book] });
      const bob1 = await Author.findOne({ where: { name: 'Bob' } });
      await bob1.createBook({ title: 'Bob two' });
      const bob = await Author.findOne({ where: { name: 'Bob' }, include: [Book], order: [[Book, 'id', 'ASC']] });
      assert.deepEqual(bob.Books.map((b) => b.title), ['Bob one', 'Bob two']);
    });
    await step('sequelize: a managed transaction that commits', async () => {
      await sequelize.transaction(async (t) => {
        const cat = await Author.create({ name: 'Cat' }, { transaction: t });
        await Book.create({ title: 'Cat book', pages: 5, authorId: cat.id }, { transaction: t });
      });
    });
    await step('sequelize: a managed transaction that rolls back', async () => {
      await assert.rejects(sequelize.transaction(async (t) => {
        await Author.create({ name: 'Dan' }, { transaction: t });
        await Author.create({ name: 'Ann' }, { transaction: t }); // unique
      }), (err) => err.name === 'SequelizeUniqueConstraintError');
      assert.equal(await Author.count({ where: { name: 'Dan' } }), 0);
    });
    await step('sequelize: an unmanaged transaction rolled back', async () => {
      const t = await sequelize.transaction();
      await Book.update({ price: '1.00' }, { where: {}, transaction: t });
      await t.rollback();
      assert.equal(await Book.count({ where: { price: '1.00' } }), 0);
    });
    await step('sequelize: update, increment and destroy with cascade', async () => {
      const [n] = await Book.update({ price: '12.50' }, { where: { title: 'First' } });
      assert.equal(n, 1);
      await Book.increment('pages', { by: 2, where: { title: 'Bob one' } });
      await Author.destroy({ where: { name: 'Cat' } });
      assert.equal(await Book.count({ where: { title: 'Cat book' } }), 0);
    });
    await step('sequelize: upsert updates the row under the key and inserts a new one', async () => {
      await Author.upsert({ id: 1, name: 'Ann', born: '1971-01-01' });
      assert.equal(await Author.count({ where: { id: 1, born: '1971-01-01' } }), 1);
      await Author.upsert({ id: 10, name: 'Eve', born: '1990-02-02' });
      assert.equal(await Author.count({ where: { name: 'Ann' } }), 1);
      const eve = await Author.findByPk(10);
      assert.equal(eve.name, 'Eve');
      await assert.rejects(Author.upsert({ id: 11, name: 'Eve' }), (err) => err.name === 'SequelizeUniqueConstraintError');
    });
    await step('sequelize: a foreign key violation', async () => {
      await assert.rejects(Book.create({ title: 'orphan', authorId: 77 }), (err) => err.name === 'SequelizeForeignKeyConstraintError');
    });
  } finally {
    await sequelize.close();
  }
  return {
    sq_authors: await rowsOf(pg, 'sq_authors', ['id', 'name', 'born::text AS born', '("createdAt" IS NOT NULL) AS created']),
    sq_books: await rowsOf(pg, 'sq_books', ['id', 'title', 'pages', 'price', '"authorId"', 'isbn']),
  };
}

// ---- Kysely ---------------------------------------------------------------

async function runKysely(pg) {
  const { Kysely, PostgresDialect, Migrator, sql } = require('kysely');
  const { Pool } = require('pg');
  const db = new Kysely({ dialect: new PostgresDialect({ pool: new Pool({ connectionString: dsn, max: 2 }) }) });
  const migrations = {
    '2024_01_person': {
      async up(db) {
        await db.schema.createTable('ky_person')
          .addColumn('id', 'serial', (c) => c.primaryKey())
          .addColumn('first_name', 'varchar(255)', (c) => c.notNull())
          .addColumn('gender', 'varchar(50)', (c) => c.notNull().check(sql`gender in ('m', 'f', 'x')`))
          .addColumn('created_at', 'timestamp', (c) => c.defaultTo(sql`now()`).notNull())
          .execute();
        await db.schema.createTable('ky_pet')
          .addColumn('id', 'serial', (c) => c.primaryKey())
          .addColumn('name', 'varchar', (c) => c.notNull().unique())
          .addColumn('owner_id', 'integer', (c) => c.references('ky_person.id').onDelete('cascade').notNull())
          .addColumn('species', 'varchar', (c) => c.notNull())
          .execute();
        await db.schema.createIndex('ky_pet_owner_id_index').on('ky_pet').column('owner_id').execute();
      },
      async down(db) {
        await db.schema.dropTable('ky_pet').execute();
        await db.schema.dropTable('ky_person').execute();
      },
    },
    '2024_02_nickname': {
      async up(db) {
        await db.schema.alterTable('ky_person').addColumn('nickname', 'text').execute();
      },
      async down(db) {
        await db.schema.alterTable('ky_person').dropColumn('nickname').execute();
      },
    },
  };
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  try {
    await step('kysely: Migrator.migrateToLatest', async () => {
      const { error, results } = await migrator.migrateToLatest();
      if (error) throw error;
      assert.deepEqual(results.map((r) => r.status), ['Success', 'Success']);
    });
    await step('kysely: migrateDown, then migrateToLatest again', async () => {
      let { error } = await migrator.migrateDown();
      if (error) throw error;
      ({ error } = await migrator.migrateToLatest());
      if (error) throw error;
    });
    await step('kysely: introspection', async () => {
      const tables = await db.introspection.getTables();
      const person = tables.find((t) => t.name === 'ky_person');
      assert.ok(person, 'ky_person is listed');
      const id = person.columns.find((c) => c.name === 'id');
      assert.equal(id.dataType, 'int4');
      assert.equal(id.isAutoIncrementing, true);
      assert.equal(id.hasDefaultValue, true);
      const nick = person.columns.find((c) => c.name === 'nickname');
      assert.equal(nick.isNullable, true);
      assert.ok(tables.find((t) => t.name === 'ky_pet'), 'ky_pet is listed');
      assert.ok(!tables.find((t) => t.name === 'kysely_migration'), 'migration tables are not listed without withInternalKyselyTables');
    });
    await step('kysely: insert returning, select with join', async () => {
      const ann = await db.insertInto('ky_person').values({ first_name: 'Ann', gender: 'f' }).returning('id').executeTakeFirstOrThrow();
      assert.equal(ann.id, 1);
      await db.insertInto('ky_pet').values([
        { name: 'Rex', owner_id: ann.id, species: 'dog' },
        { name: 'Tom', owner_id: ann.id, species: 'cat' },
      ]).execute();
      const rows = await db.selectFrom('ky_pet').innerJoin('ky_person', 'ky_person.id', 'ky_pet.owner_id')
        .select(['ky_pet.name', 'ky_person.first_name']).orderBy('ky_pet.name').execute();
      assert.deepEqual(rows, [{ name: 'Rex', first_name: 'Ann' }, { name: 'Tom', first_name: 'Ann' }]);
    });
    await step('kysely: a transaction that commits', async () => {
      await db.transaction().execute(async (trx) => {
        const bob = await trx.insertInto('ky_person').values({ first_name: 'Bob', gender: 'm', nickname: 'bobby' }).returning('id').executeTakeFirstOrThrow();
        await trx.insertInto('ky_pet').values({ name: 'Nemo', owner_id: bob.id, species: 'fish' }).execute();
      });
    });
    await step('kysely: a transaction that rolls back', async () => {
      await assert.rejects(db.transaction().execute(async (trx) => {
        await trx.insertInto('ky_person').values({ first_name: 'Gone', gender: 'x' }).execute();
        await trx.insertInto('ky_person').values({ first_name: 'Bad', gender: 'q' }).execute(); // check
      }), (err) => err.code === '23514');
      const gone = await db.selectFrom('ky_person').where('first_name', '=', 'Gone').selectAll().execute();
      assert.equal(gone.length, 0);
    });
    await step('kysely: update and delete, cascading', async () => {
      const r = await db.updateTable('ky_pet').set({ species: 'wolf' }).where('name', '=', 'Rex').executeTakeFirst();
      assert.equal(r.numUpdatedRows, 1n);
      await db.deleteFrom('ky_person').where('first_name', '=', 'Bob').execute();
      const nemo = await db.selectFrom('ky_pet').where('name', '=', 'Nemo').selectAll().execute();
      assert.equal(nemo.length, 0);
    });
  } finally {
    await db.destroy();
  }
  return {
    ky_person: await rowsOf(pg, 'ky_person', ['id', 'first_name', 'gender', 'nickname', '(created_at IS NOT NULL) AS created']),
    ky_pet: await rowsOf(pg, 'ky_pet', ['id', 'name', 'owner_id', 'species']),
    kysely_migration: await rowsOf(pg, 'kysely_migration', ['name']),
  };
}

async function main() {
  const { Client } = require('pg');
  const pg = new Client({ connectionString: dsn });
  await pg.connect();
  const rows = {};
  const parts = { knex: runKnex, sequelize: runSequelize, kysely: runKysely };
  try {
    for (const [name, run] of Object.entries(parts)) {
      if (only && only !== name) continue;
      const got = await step(`${name}: final rows`, () => run(pg));
      if (got) Object.assign(rows, got);
    }
  } finally {
    await pg.end();
  }
  console.log('ROWS ' + JSON.stringify(rows));
  if (failures > 0) {
    console.log(`${failures} step(s) failed`);
    process.exit(1);
  }
}

main().catch((err) => {
  console.log(`not ok - ${err.stack || err}`);
  process.exit(1);
});
