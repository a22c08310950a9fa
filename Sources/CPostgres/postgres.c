#include "CPostgres.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

/* libpq's ABI values used here (libpq-fe.h, stable since PostgreSQL 7.4). */
enum { CONNECTION_OK = 0, PGRES_COMMAND_OK = 1, PGRES_TUPLES_OK = 2, PG_DIAG_SQLSTATE = 'C' };
typedef struct { char *relname; int be_pid; char *extra; } notification;

/* libpq's entry points, filled in once by load(). */
static struct {
    void *(*connectdb_params)(const char *const *, const char *const *, int);
    int (*status)(const void *);
    char *(*error_message)(const void *);
    void (*finish)(void *);
    int (*socket)(const void *);
    void *(*exec_params)(void *, const char *, int, const unsigned *, const char *const *, const int *, const int *, int);
    int (*result_status)(const void *);
    char *(*result_error_message)(const void *);
    char *(*result_error_field)(const void *, int);
    int (*ntuples)(const void *);
    int (*nfields)(const void *);
    int (*getisnull)(const void *, int, int);
    int (*getlength)(const void *, int, int);
    char *(*getvalue)(const void *, int, int);
    void (*clear)(void *);
    int (*consume_input)(void *);
    notification *(*notifies)(void *);
    void (*freemem)(void *);
    void *(*set_notice_processor)(void *, void (*)(void *, const char *), void *);
} pq;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded;
static const char *load_error;

static void load(void) {
    /* The soname of libpq since PostgreSQL 8.0 (Debian's libpq5). */
    void *library = dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        load_error = dlerror();
        if (load_error == NULL) load_error = "dlopen failed";
        return;
    }
#define SYMBOL(field, name)                                   \
    *(void **)(&pq.field) = dlsym(library, name);             \
    if (pq.field == NULL) {                                   \
        load_error = "libpq.so.5 lacks " name;                \
        return;                                               \
    }
    SYMBOL(connectdb_params, "PQconnectdbParams")
    SYMBOL(status, "PQstatus")
    SYMBOL(error_message, "PQerrorMessage")
    SYMBOL(finish, "PQfinish")
    SYMBOL(socket, "PQsocket")
    SYMBOL(exec_params, "PQexecParams")
    SYMBOL(result_status, "PQresultStatus")
    SYMBOL(result_error_message, "PQresultErrorMessage")
    SYMBOL(result_error_field, "PQresultErrorField")
    SYMBOL(ntuples, "PQntuples")
    SYMBOL(nfields, "PQnfields")
    SYMBOL(getisnull, "PQgetisnull")
    SYMBOL(getlength, "PQgetlength")
    SYMBOL(getvalue, "PQgetvalue")
    SYMBOL(clear, "PQclear")
    SYMBOL(consume_input, "PQconsumeInput")
    SYMBOL(notifies, "PQnotifies")
    SYMBOL(freemem, "PQfreemem")
    SYMBOL(set_notice_processor, "PQsetNoticeProcessor")
    /* tcp_user_timeout (PostgreSQL 12) has no symbol of its own: libpq 11 and older refuse the
       keyword at connect time, with a message that names it. */
#undef SYMBOL
    loaded = 1;
}

int authctl_pg_load(void) {
    pthread_once(&once, load);
    return loaded;
}

const char *authctl_pg_load_error(void) {
    authctl_pg_load();
    return load_error;
}

static void ignore_notice(void *context, const char *message) {
    (void)context;
    (void)message;
}

void *authctl_pg_connect(const char *conninfo) {
    if (!authctl_pg_load()) return NULL;
    /* Ours first, the conninfo last: a keyword repeated keeps its last value, so the caller's own
       settings win (libpq's "expand_dbname"). */
    static const char *const keywords[] = {"connect_timeout", "keepalives", "keepalives_idle", "keepalives_interval",
                                           "keepalives_count", "tcp_user_timeout", "options", "application_name", "dbname", NULL};
    const char *values[] = {"5", "1", "5", "2", "3", "10000", "-c lock_timeout=20000 -c statement_timeout=60000", "authctl", conninfo, NULL};
    void *connection = pq.connectdb_params(keywords, values, 1);
    /* The server's notices (a connection ended by the server, say) are not printed on stderr as
       libpq would: a failure reaches the caller as an error of its own. */
    if (connection != NULL) pq.set_notice_processor(connection, ignore_notice, NULL);
    return connection;
}

int authctl_pg_connected(void *connection) { return connection != NULL && authctl_pg_load() && pq.status(connection) == CONNECTION_OK; }
const char *authctl_pg_connection_message(void *connection) {
    if (connection == NULL || !authctl_pg_load()) return load_error != NULL ? load_error : "out of memory";
    return pq.error_message(connection);
}
void authctl_pg_close(void *connection) { if (connection != NULL && authctl_pg_load()) pq.finish(connection); }
int authctl_pg_socket(void *connection) { return connection != NULL && authctl_pg_load() ? pq.socket(connection) : -1; }

void *authctl_pg_exec(void *connection, const char *sql, int count, const char *const *values, const int *lengths) {
    if (connection == NULL || !authctl_pg_load()) return NULL;
    int formats[count > 0 ? count : 1];
    for (int i = 0; i < count; i++) formats[i] = 1;
    return pq.exec_params(connection, sql, count, NULL, values, lengths, formats, 1);
}

int authctl_pg_succeeded(void *result) {
    if (result == NULL || !authctl_pg_load()) return 0;
    int status = pq.result_status(result);
    return status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK;
}
const char *authctl_pg_result_message(void *result) {
    if (result == NULL || !authctl_pg_load()) return "out of memory";
    return pq.result_error_message(result);
}
const char *authctl_pg_result_state(void *result) {
    if (result == NULL || !authctl_pg_load()) return "";
    const char *state = pq.result_error_field(result, PG_DIAG_SQLSTATE);
    return state != NULL ? state : "";
}
int authctl_pg_rows(void *result) { return result != NULL && authctl_pg_load() ? pq.ntuples(result) : 0; }
int authctl_pg_columns(void *result) { return result != NULL && authctl_pg_load() ? pq.nfields(result) : 0; }
int authctl_pg_is_null(void *result, int row, int column) { return result == NULL || !authctl_pg_load() || pq.getisnull(result, row, column); }
int authctl_pg_length(void *result, int row, int column) { return result != NULL && authctl_pg_load() ? pq.getlength(result, row, column) : 0; }
const char *authctl_pg_value(void *result, int row, int column) { return result != NULL && authctl_pg_load() ? pq.getvalue(result, row, column) : NULL; }
void authctl_pg_clear(void *result) { if (result != NULL && authctl_pg_load()) pq.clear(result); }

int authctl_pg_notifications(void *connection) {
    if (connection == NULL || !authctl_pg_load()) return -1;
    if (!pq.consume_input(connection)) return -1;
    int count = 0;
    notification *n;
    while ((n = pq.notifies(connection)) != NULL) {
        count++;
        pq.freemem(n);
    }
    return count;
}
