// Command ferretdb runs FerretDB v1 (PostgreSQL backend) as the local MongoDB-wire server.
//
// It embeds the ferretdb package instead of installing FerretDB's own CLI, which panics when
// built with `go install` (FerretDB issue 2982).
package main

import (
	"context"
	"flag"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listen := flag.String("listen-addr", "127.0.0.1:27017", "TCP address to listen on")
	pgURL := flag.String("postgresql-url", "", "PostgreSQL connection string")
	flag.Parse()

	if *pgURL == "" {
		log.Fatal("-postgresql-url is required")
	}

	f, err := ferretdb.New(&ferretdb.Config{
		Listener:      ferretdb.ListenerConfig{TCP: *listen},
		Handler:       "postgresql",
		PostgreSQLURL: *pgURL,
	})
	if err != nil {
		log.Fatal(err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	log.Printf("ferretdb listening on %s", *listen)
	if err := f.Run(ctx); err != nil {
		log.Fatal(err)
	}
}
