// Command ferretdb runs FerretDB v1 (PostgreSQL backend) as the local MongoDB-wire server.
//
// It embeds the ferretdb package instead of installing FerretDB's own CLI, which panics when
// built with `go install` (a FerretDB bug).
//
// Our patch (patches/, applied by scripts/infra.sh) makes single-document updates atomic with a
// lock inside this process, so only one process may serve a PostgreSQL database: this command
// holds a PostgreSQL advisory lock for as long as it runs, and a second one on the same
// database refuses to start (tools/ferretdb/README.md).
package main

import (
	"context"
	"errors"
	"flag"
	"log"
	"net/url"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/FerretDB/FerretDB/ferretdb"
)

// singleProcessLockKey is the advisory lock key: "pack-ferretdb" as a number, unlikely to be
// taken by anything else in the database.
const singleProcessLockKey = 0x7061636b_6672_7274

var errLockHeld = errors.New("another FerretDB process serves this PostgreSQL database " +
	"(the patched FerretDB must run as one process per database, see tools/ferretdb/README.md)")

// holdSingleProcessLock takes the advisory lock on a connection of its own; the lock lasts as
// long as that connection. Both the first take and keepSingleProcessLock's re-take come here.
func holdSingleProcessLock(ctx context.Context, pgURL string) (*pgx.Conn, error) {
	config, err := pgx.ParseConfig(pgURL)
	if err != nil {
		return nil, err
	}
	withoutPoolParams(config.RuntimeParams)
	config.RuntimeParams["application_name"] = "FerretDB single-process lock"

	conn, err := pgx.ConnectConfig(ctx, config)
	if err != nil {
		return nil, err
	}

	var taken bool
	if err = conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", int64(singleProcessLockKey)).Scan(&taken); err != nil {
		conn.Close(ctx)
		return nil, err
	}
	if !taken {
		conn.Close(ctx)
		return nil, errLockHeld
	}

	return conn, nil
}

// withoutPoolParams removes the URL's pool settings (pool_max_conns and the other pool_* keys)
// from a single connection's run-time parameters. They are meant for FerretDB's pgxpool, which
// takes them out of the URL itself; pgx.ParseConfig leaves them in RuntimeParams, and PostgreSQL
// refuses the connection ("unrecognized configuration parameter pool_max_conns").
func withoutPoolParams(params map[string]string) {
	for name := range params {
		if strings.HasPrefix(name, "pool_") {
			delete(params, name)
		}
	}
}

// keepSingleProcessLock checks the lock's connection; when PostgreSQL went away (a restart),
// it takes the lock again once PostgreSQL is back, and stops the process if someone else has
// it by then.
func keepSingleProcessLock(ctx context.Context, pgURL string, conn *pgx.Conn) {
	ticker := time.NewTicker(5 * time.Second)
	defer ticker.Stop()

	for {
		select {
		case <-ctx.Done():
			if conn != nil {
				conn.Close(context.Background())
			}
			return
		case <-ticker.C:
		}

		if conn != nil && conn.Ping(ctx) == nil {
			continue
		}
		if conn != nil {
			conn.Close(ctx)
			conn = nil
		}

		next, err := holdSingleProcessLock(ctx, pgURL)
		switch {
		case errors.Is(err, errLockHeld):
			log.Fatal(err)
		case ctx.Err() != nil:
			// shutting down
		case err != nil:
			log.Printf("single-process lock: PostgreSQL unavailable, retrying: %v", err)
		default:
			conn = next
		}
	}
}

// withSessionSettings adds session settings to a postgres:// URL that does not set them (pgx sends
// unknown URL parameters as run-time parameters):
//   - random_page_cost=1.1: PostgreSQL's default (4) prices a heap page read at random as four
//     sequential ones, for spinning disks; the data here is cached or on SSD, and with the
//     default the planner walks a list's whole `_id` index filtering it instead of using an
//     index on the filter's field and the sort (docs/decisions/0033);
//   - jit=off: FerretDB's statements are short, and compiling them cost more than running
//     them (the first scan of a 100,000-document collection's stored types took 531 ms, 796 ms
//     of it compiling across its workers);
//   - plan_cache_mode=force_custom_plan: pgx prepares its statements, and after five runs
//     PostgreSQL may switch to a generic plan that estimates a filter's matches without their
//     values; one such plan walked a list's whole `_id` index filtering it (51 ms) instead of
//     reading the 6,000 matches from an index on the filter's fields. Planning each statement
//     with its values costs a fraction of a millisecond;
//   - default_toast_compression=lz4: a document of more than about 2 KB (a pipeline with its
//     stages is 6.4 KB of jsonb as FerretDB stores it, with its type schema; 1.9 KB compressed)
//     is compressed on every write and decompressed on every read; PostgreSQL's own pglz took
//     16-36 % more of PostgreSQL's CPU per findOneAndUpdate of such a document than lz4 (Debian's
//     PostgreSQL 15, which scripts/infra.sh runs, is built with it; values written before stay
//     pglz and are read as they are).
//
// Other URL forms are left as they are.
func withSessionSettings(pgURL string) string {
	u, err := url.Parse(pgURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return pgURL
	}

	q := u.Query()
	for name, value := range map[string]string{
		"random_page_cost":          "1.1",
		"jit":                       "off",
		"plan_cache_mode":           "force_custom_plan",
		"default_toast_compression": "lz4",
	} {
		if !q.Has(name) {
			q.Set(name, value)
		}
	}

	u.RawQuery = q.Encode()

	return u.String()
}

// gcPercent is the garbage collector's target (Go's GOGC) unless GOGC is set: FerretDB decodes and
// encodes every document it reads or writes, and with Go's default (100) about a fifth of its CPU
// under bench:pipeline's load went to the collector (pprof: marking 15 %, sweeping 4 %); its heap
// is tens of megabytes, so letting it grow to five times the live data between collections costs
// little memory (tools/ferretdb/README.md).
const gcPercent = 400

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}

	listen := flag.String("listen-addr", "127.0.0.1:27017", "TCP address to listen on")
	pgURL := flag.String("postgresql-url", "", "PostgreSQL connection string")
	flag.Parse()

	if *pgURL == "" {
		log.Fatal("-postgresql-url is required")
	}
	*pgURL = withSessionSettings(*pgURL)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	lock, err := holdSingleProcessLock(ctx, *pgURL)
	if err != nil {
		log.Fatal(err)
	}
	go keepSingleProcessLock(ctx, *pgURL, lock)

	f, err := ferretdb.New(&ferretdb.Config{
		Listener:      ferretdb.ListenerConfig{TCP: *listen},
		Handler:       "postgresql",
		PostgreSQLURL: *pgURL,
	})
	if err != nil {
		log.Fatal(err)
	}

	log.Printf("ferretdb listening on %s", *listen)
	if err := f.Run(ctx); err != nil {
		log.Fatal(err)
	}
}
