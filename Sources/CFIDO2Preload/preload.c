/* libauthctl-fido2.so (CFIDO2Preload.h): libfido2's device list and open, extended to authctl's
   security keys. libfido2 1.12 lets a device carry I/O functions of its own
   (fido_dev_set_io_functions, or fido_dev_info_set for an entry of the list); with them set,
   libfido2 does all the CTAPHID framing, the channel, the timeouts and every CTAP command as for a
   USB key, and only the 64-byte reports go through the functions here, over the key's socket.

   libfido2's own functions are looked up at each call: first the next definition after this
   library in the program's search order (libfido2 linked by the program), else a libfido2 that is
   loaded already but not in that order (linked by a module the program opened itself, as a PAM
   module is). Nothing is cached, so a libfido2 unloaded and loaded again is found afresh; and
   nothing is ever loaded here. Messages go to standard error, prefixed with the library's name:
   an AUTHCTL_CTAP entry that cannot be read, a key named by path that cannot be reached. */
#define _GNU_SOURCE
#include "CFIDO2Preload.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"

#define PATH_PREFIX "authctl:"
#define PATH_PREFIX_LEN (sizeof(PATH_PREFIX) - 1)
/* Found only if some module of the process loaded it already (RTLD_NOLOAD). */
#define LIBFIDO2_SONAME "libfido2.so.1"

__attribute__((format(printf, 1, 2))) static void say(const char *format, ...) {
    char line[512];
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(line, sizeof(line), format, arguments);
    va_end(arguments);
    fprintf(stderr, "libauthctl-fido2: %s\n", line); /* one write: no interleaving with the tool's own */
}

/* libfido2's definition of `name`, or NULL (and a message) when no libfido2 is loaded. */
static void *libfido2(const char *name) {
    void *function = dlsym(RTLD_NEXT, name);
    if (function == NULL) {
        void *library = dlopen(LIBFIDO2_SONAME, RTLD_LAZY | RTLD_NOLOAD);
        if (library != NULL) {
            function = dlsym(library, name);
            dlclose(library); /* NOLOAD took a reference of its own; the module's remains */
        }
    }
    if (function == NULL)
        say("%s: no libfido2 is loaded in this process", name);
    return function;
}

static int is_authctl_path(const char *path) {
    return path != NULL && strncmp(path, PATH_PREFIX, PATH_PREFIX_LEN) == 0;
}

/* --- the I/O libfido2 drives ---------------------------------------------------------------- */

static void *io_open(const char *path) {
    struct wire_place place;
    char why[160];
    if (!is_authctl_path(path)) {
        /* A device opened once over the key's socket keeps these functions (libfido2 has no way
           back to its own): opening it on another path is refused. */
        say("%s: a device opened as an authctl key cannot open another path", path ? path : "(null)");
        return NULL;
    }
    if (wire_place_parse(path + PATH_PREFIX_LEN, &place, why, sizeof(why)) != 0) {
        say("%s: %s", path, why);
        return NULL;
    }
    struct wire_link *link = wire_link_open(&place);
    if (link == NULL)
        say("%s: the key cannot be reached: %s", path, strerror(errno));
    return link;
}

static void io_close(void *handle) {
    wire_link_close(handle);
}

/* libfido2 reads one report of the length it was told (64, as a device with I/O functions of its
   own has) and waits `ms` milliseconds at most (-1: no limit). */
static int io_read(void *handle, unsigned char *buffer, size_t length, int ms) {
    if (handle == NULL || length != WIRE_REPORT_LEN)
        return -1;
    return wire_link_receive(handle, buffer, ms) == 0 ? WIRE_REPORT_LEN : -1;
}

/* libfido2 writes a report ID byte (0) before each 64-byte report, as hidraw wants; the wire
   carries the report alone. */
static int io_write(void *handle, const unsigned char *buffer, size_t length) {
    if (handle == NULL || length != WIRE_REPORT_LEN + 1)
        return -1;
    return wire_link_send(handle, buffer + 1) == 0 ? (int)length : -1;
}

static const fido_dev_io_t authctl_io = {io_open, io_close, io_read, io_write};

/* Gives `dev` the key's I/O, for a path "authctl:..." (checked first: a path that names no key is
   refused before anything is changed). */
static int use_authctl_io(fido_dev_t *dev, const char *path) {
    struct wire_place place;
    char why[160];
    if (wire_place_parse(path + PATH_PREFIX_LEN, &place, why, sizeof(why)) != 0) {
        say("%s: %s", path, why);
        return FIDO_ERR_INVALID_ARGUMENT;
    }
    int (*set_io)(fido_dev_t *, const fido_dev_io_t *) = libfido2("fido_dev_set_io_functions");
    return set_io == NULL ? FIDO_ERR_INTERNAL : set_io(dev, &authctl_io);
}

/* --- libfido2's functions, extended ---------------------------------------------------------- */

/* Appends the keys AUTHCTL_CTAP names (a comma-separated list of unix:/abs/path and
   udp:HOST:PORT) that are there now, in its order, each once, after the devices libfido2 found. */
static void append_keys(fido_dev_info_t *devlist, size_t ilen, size_t *olen) {
    const char *setting = getenv("AUTHCTL_CTAP");
    if (setting == NULL || *setting == '\0')
        return;
    int (*info_set)(fido_dev_info_t *, size_t, const char *, const char *, const char *, const fido_dev_io_t *,
                    const fido_dev_transport_t *) = libfido2("fido_dev_info_set");
    const char *(*info_path)(const fido_dev_info_t *) = libfido2("fido_dev_info_path");
    const fido_dev_info_t *(*info_ptr)(const fido_dev_info_t *, size_t) = libfido2("fido_dev_info_ptr");
    char *list = strdup(setting);
    if (info_set == NULL || info_path == NULL || info_ptr == NULL || list == NULL) {
        free(list);
        return;
    }
    size_t first = *olen; /* where this library's entries begin */
    char *cursor = list;
    for (char *entry = strsep(&cursor, ","); entry != NULL; entry = strsep(&cursor, ",")) {
        while (*entry == ' ' || *entry == '\t')
            entry++;
        char *end = entry + strlen(entry);
        while (end > entry && (end[-1] == ' ' || end[-1] == '\t'))
            *--end = '\0';
        if (*entry == '\0')
            continue;
        struct wire_place place;
        char why[160];
        if (wire_place_parse(entry, &place, why, sizeof(why)) != 0) {
            say("AUTHCTL_CTAP: the entry '%s' is left out: %s", entry, why);
            continue;
        }
        char path[PATH_PREFIX_LEN + 512];
        if ((size_t)snprintf(path, sizeof(path), "%s%s", PATH_PREFIX, entry) >= sizeof(path))
            continue;
        int listed = 0;
        for (size_t i = first; i < *olen && !listed; i++)
            listed = strcmp(info_path(info_ptr(devlist, i)), path) == 0;
        if (listed || *olen >= ilen || !wire_place_present(&place))
            continue;
        if (info_set(devlist, *olen, path, "authctl", "security key", &authctl_io, NULL) == FIDO_OK)
            (*olen)++;
    }
    free(list);
}

int fido_dev_info_manifest(fido_dev_info_t *devlist, size_t ilen, size_t *olen) {
    int (*manifest)(fido_dev_info_t *, size_t, size_t *) = libfido2("fido_dev_info_manifest");
    if (manifest == NULL)
        return FIDO_ERR_INTERNAL;
    int status = manifest(devlist, ilen, olen);
    if (status == FIDO_OK && devlist != NULL && olen != NULL)
        append_keys(devlist, ilen, olen);
    return status;
}

int fido_dev_open(fido_dev_t *dev, const char *path) {
    int (*open)(fido_dev_t *, const char *) = libfido2("fido_dev_open");
    if (open == NULL)
        return FIDO_ERR_INTERNAL;
    if (dev != NULL && is_authctl_path(path)) {
        int status = use_authctl_io(dev, path);
        if (status != FIDO_OK)
            return status;
    }
    return open(dev, path);
}

/* An entry of the list carries the key's I/O, but libfido2 1.12 takes a device made from an entry
   for a hidraw one unless it has transport functions too (it would ask the handle for its report
   lengths); the I/O set with fido_dev_set_io_functions is taken as the device's own. */
fido_dev_t *fido_dev_new_with_info(const fido_dev_info_t *info) {
    fido_dev_t *(*new_with_info)(const fido_dev_info_t *) = libfido2("fido_dev_new_with_info");
    const char *(*info_path)(const fido_dev_info_t *) = libfido2("fido_dev_info_path");
    if (new_with_info == NULL || info_path == NULL)
        return NULL;
    fido_dev_t *dev = new_with_info(info);
    if (dev != NULL && is_authctl_path(info_path(info)) && use_authctl_io(dev, info_path(info)) != FIDO_OK) {
        void (*dev_free)(fido_dev_t **) = libfido2("fido_dev_free");
        if (dev_free != NULL)
            dev_free(&dev);
        return NULL;
    }
    return dev;
}
