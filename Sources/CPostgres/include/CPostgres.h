#ifndef AUTHCTL_CPOSTGRES_H
#define AUTHCTL_CPOSTGRES_H
/* libpq (PostgreSQL's client library), loaded when an account store on a PostgreSQL server is
   first used, so a command whose store is a directory neither pays for loading it nor needs it
   installed. Only libpq's stable C ABI is used (libpq.so.5, PostgreSQL 12 and later for
   tcp_user_timeout), through prototypes of our own: building needs no libpq header. Connections
   and results are opaque pointers; each function below is libpq's of the same name (or says which
   it wraps), failing as libpq does when it is out of memory (NULL, or a bad status) when libpq
   cannot be loaded, with the reason in authctl_pg_load_error(). */
#include <stddef.h>

/* Whether libpq is loaded (loading it if it is not yet). */
int authctl_pg_load(void);
/* Why libpq could not be loaded, or NULL. */
const char *authctl_pg_load_error(void);

/* PQconnectdbParams over `conninfo` (a postgresql:// URI or key=value string) with authctl's
   defaults first, so the conninfo's own settings win: a 5 s connect timeout, TCP keepalives and a
   10 s TCP user timeout, so a server behind a partition is found unreachable in seconds rather
   than minutes; a 20 s lock timeout and a 60 s statement timeout (server options), so a row held
   by another session fails a call rather than hanging it. The server's notices are not printed.
   Never NULL unless out of memory; check authctl_pg_connected. */
void *authctl_pg_connect(const char *conninfo);
/* Whether the connection is up (PQstatus == CONNECTION_OK). */
int authctl_pg_connected(void *connection);
/* PQerrorMessage. */
const char *authctl_pg_connection_message(void *connection);
/* PQfinish. */
void authctl_pg_close(void *connection);
/* PQsocket: the connection's socket, to wait on for notifications. */
int authctl_pg_socket(void *connection);

/* PQexecParams with parameters and results in binary format and the parameter types left to the
   server: `values[i]` holds `lengths[i]` bytes (NULL: SQL NULL). */
void *authctl_pg_exec(void *connection, const char *sql, int count, const char *const *values, const int *lengths);
/* Whether `result` is a success (PGRES_COMMAND_OK or PGRES_TUPLES_OK). */
int authctl_pg_succeeded(void *result);
/* PQresultErrorMessage. */
const char *authctl_pg_result_message(void *result);
/* The SQLSTATE of a failed result (PQresultErrorField PG_DIAG_SQLSTATE), or "". */
const char *authctl_pg_result_state(void *result);
int authctl_pg_rows(void *result);
int authctl_pg_columns(void *result);
int authctl_pg_is_null(void *result, int row, int column);
int authctl_pg_length(void *result, int row, int column);
const char *authctl_pg_value(void *result, int row, int column);
/* PQclear. */
void authctl_pg_clear(void *result);

/* PQconsumeInput then PQnotifies until none is left: how many notifications had arrived, or -1
   when the connection failed. */
int authctl_pg_notifications(void *connection);
#endif
