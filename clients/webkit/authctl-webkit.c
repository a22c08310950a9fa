/*
 * authctl-webkit: a WebKitGTK browser for WebKitWebDriver whose pages get a user script at
 * document start (docs/browser.md, "WebKitGTK"). WebKitGTK lets no WebDriver client add a script
 * that runs before the page's own, so the browser WebKitWebDriver launches does it:
 *
 *   authctl-webkit --automation --user-script=FILE
 *
 * Under --automation it answers WebKitWebDriver as WebKitGTK's MiniBrowser does (automation
 * allowed on its web context; each session's "create-web-view" gets a new window whose web view
 * is-controlled-by-automation; the session's application info carries the WebKit version). Every
 * web view adds, in every frame at document start, the script read from FILE; FILE is read again
 * whenever a navigation starts (its navigation-action policy decision, before the web process
 * goes on with the load), so whoever rewrites FILE changes what the next page gets. A FILE that
 * is absent or empty injects nothing; one that is not a regular file (a FIFO, a device, a
 * directory — never waited on nor read), is larger than 16 MiB, or cannot be read as UTF-8 text
 * is reported on stderr and injects nothing.
 *
 * GTK's own options (--gtk-module, --display, …) are not taken: WebKitWebDriver passes on the
 * arguments its client names, and a module named there would be code loaded into the browser.
 *
 * Exit codes: 0 when the browser is ended (SIGTERM, as WebKitWebDriver ends it); 1 without an X
 * display; 64 for a bad command line.
 */
#include <errno.h>
#include <fcntl.h>
#include <glib-unix.h>
#include <gtk/gtk.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <webkit2/webkit2.h>

static gboolean automation;
static gchar *userScriptPath;
static gboolean printVersion;
static gchar *proxy;
static gchar **ignoreHosts;

static const GOptionEntry options[] = {
    { "automation", 0, 0, G_OPTION_ARG_NONE, &automation, "Run under WebKitWebDriver (WebDriver's automation)", NULL },
    { "user-script", 0, 0, G_OPTION_ARG_FILENAME, &userScriptPath,
      "Add the script in FILE at document start in every frame, reading FILE again at each navigation", "FILE" },
    { "proxy", 0, 0, G_OPTION_ARG_STRING, &proxy, "Send every request through the proxy at URL (as MiniBrowser's --proxy)", "URL" },
    { "ignore-host", 0, 0, G_OPTION_ARG_STRING_ARRAY, &ignoreHosts, "A host reached without the proxy (repeatable)", "HOST" },
    { "version", 0, 0, G_OPTION_ARG_NONE, &printVersion, "Print the WebKitGTK version", NULL },
    { NULL, 0, 0, 0, NULL, NULL, NULL }
};

/* The script every page gets, shared by every web view: one content manager, its script replaced
 * when FILE's text changes. */
static WebKitUserContentManager *contentManager;
static gchar *currentScript;

/* The largest user script taken (the page bridge is some 60 KiB). */
#define USER_SCRIPT_LIMIT (16 << 20)

/* FILE's text, or NULL when there is none to inject (said on stderr but for an absent FILE).
 * Opened without blocking and taken only as a regular file: a FIFO would hold the browser until
 * someone wrote to it, a device (/dev/zero) would never end. */
static gchar *readUserScript(gsize *length)
{
    int fd = open(userScriptPath, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        if (errno != ENOENT) /* Absent: nothing is injected (a test writes the file when it has something to add). */
            g_printerr("authctl-webkit: cannot read the user script %s: %s\n", userScriptPath, g_strerror(errno));
        return NULL;
    }
    struct stat status;
    gchar *text = NULL;
    if (fstat(fd, &status) != 0)
        g_printerr("authctl-webkit: cannot read the user script %s: %s\n", userScriptPath, g_strerror(errno));
    else if (!S_ISREG(status.st_mode))
        g_printerr("authctl-webkit: the user script %s is not a regular file: nothing injected\n", userScriptPath);
    else if (status.st_size > USER_SCRIPT_LIMIT)
        g_printerr("authctl-webkit: the user script %s is larger than %d MiB: nothing injected\n", userScriptPath, USER_SCRIPT_LIMIT >> 20);
    else {
        /* Read to its end, which may have moved since fstat: never past the limit. */
        gsize size = (gsize)status.st_size + 1, done = 0;
        text = g_malloc(size + 1);
        for (;;) {
            ssize_t got = read(fd, text + done, size - done);
            if (got < 0 && errno == EINTR)
                continue;
            if (got < 0) {
                g_printerr("authctl-webkit: cannot read the user script %s: %s\n", userScriptPath, g_strerror(errno));
                g_clear_pointer(&text, g_free);
                break;
            }
            if (got == 0)
                break;
            done += (gsize)got;
            if (done > USER_SCRIPT_LIMIT) {
                g_printerr("authctl-webkit: the user script %s is larger than %d MiB: nothing injected\n", userScriptPath, USER_SCRIPT_LIMIT >> 20);
                g_clear_pointer(&text, g_free);
                break;
            }
            if (done == size) {
                size = MIN(size * 2, (gsize)USER_SCRIPT_LIMIT + 1);
                text = g_realloc(text, size + 1);
            }
        }
        if (text) {
            text[done] = '\0';
            *length = done;
        }
    }
    close(fd);
    return text;
}

static void refreshUserScript(void)
{
    if (!userScriptPath)
        return;
    gsize length = 0;
    gchar *text = readUserScript(&length);
    if (!text) {
        text = g_strdup("");
        length = 0;
    } else if (strlen(text) != length || !g_utf8_validate(text, length, NULL)) {
        g_printerr("authctl-webkit: the user script %s is not UTF-8 text: nothing injected\n", userScriptPath);
        g_free(text);
        text = g_strdup("");
    }
    if (currentScript && !strcmp(currentScript, text)) {
        g_free(text);
        return;
    }
    g_free(currentScript);
    currentScript = text;
    webkit_user_content_manager_remove_all_scripts(contentManager);
    if (!*currentScript)
        return;
    WebKitUserScript *script = webkit_user_script_new(currentScript, WEBKIT_USER_CONTENT_INJECT_ALL_FRAMES,
        WEBKIT_USER_SCRIPT_INJECT_AT_DOCUMENT_START, NULL, NULL);
    webkit_user_content_manager_add_script(contentManager, script);
    webkit_user_script_unref(script);
}

/* A navigation is about to start (in the main frame or a frame, from the page or from WebDriver):
 * the policy answer reaches the web process after the new script does, both on its one
 * connection, so the document the navigation makes gets the script FILE holds now. */
static gboolean decidePolicy(WebKitWebView *view, WebKitPolicyDecision *decision, WebKitPolicyDecisionType type, gpointer data)
{
    if (type == WEBKIT_POLICY_DECISION_TYPE_NAVIGATION_ACTION || type == WEBKIT_POLICY_DECISION_TYPE_NEW_WINDOW_ACTION)
        refreshUserScript();
    return FALSE; /* WebKit's own decision */
}

static void closeView(WebKitWebView *view, GtkWidget *window)
{
    gtk_widget_destroy(window);
}

static WebKitWebView *newView(WebKitWebContext *context);

/* window.open() and target=_blank: a new window of the same kind (WebKitWebDriver sees it as a
 * new browsing context). */
static GtkWidget *createView(WebKitWebView *view, WebKitNavigationAction *action, WebKitWebContext *context)
{
    refreshUserScript();
    return GTK_WIDGET(newView(context));
}

static void readyToShow(WebKitWebView *view, GtkWidget *window)
{
    gtk_widget_show_all(window);
}

static WebKitWebView *newView(WebKitWebContext *context)
{
    WebKitWebView *view = WEBKIT_WEB_VIEW(g_object_new(WEBKIT_TYPE_WEB_VIEW,
        "web-context", context,
        "user-content-manager", contentManager,
        "is-controlled-by-automation", automation,
        NULL));
    WebKitSettings *settings = webkit_web_view_get_settings(view);
    webkit_settings_set_enable_developer_extras(settings, TRUE);
    webkit_settings_set_javascript_can_open_windows_automatically(settings, TRUE);

    GtkWidget *window = gtk_window_new(GTK_WINDOW_TOPLEVEL);
    gtk_window_set_title(GTK_WINDOW(window), "authctl-webkit");
    gtk_window_set_default_size(GTK_WINDOW(window), 1024, 768);
    gtk_container_add(GTK_CONTAINER(window), GTK_WIDGET(view));
    g_signal_connect(view, "decide-policy", G_CALLBACK(decidePolicy), NULL);
    g_signal_connect(view, "create", G_CALLBACK(createView), context);
    g_signal_connect(view, "ready-to-show", G_CALLBACK(readyToShow), window);
    g_signal_connect(view, "close", G_CALLBACK(closeView), window);
    return view;
}

/* WebKitWebDriver's New Session and New Window: a new window, shown at once. */
static WebKitWebView *createViewForAutomation(WebKitAutomationSession *session, WebKitWebContext *context)
{
    refreshUserScript();
    WebKitWebView *view = newView(context);
    gtk_widget_show_all(gtk_widget_get_toplevel(GTK_WIDGET(view)));
    return view;
}

static void automationStarted(WebKitWebContext *context, WebKitAutomationSession *session, gpointer data)
{
    /* WebKitWebDriver matches browserName/browserVersion against these. */
    WebKitApplicationInfo *info = webkit_application_info_new();
    webkit_application_info_set_name(info, "authctl-webkit");
    webkit_application_info_set_version(info, webkit_get_major_version(), webkit_get_minor_version(), webkit_get_micro_version());
    webkit_automation_session_set_application_info(session, info);
    webkit_application_info_unref(info);
    g_signal_connect(session, "create-web-view", G_CALLBACK(createViewForAutomation), context);
}

static gboolean quit(gpointer data)
{
    gtk_main_quit();
    return G_SOURCE_REMOVE;
}

int main(int argc, char *argv[])
{
    GOptionContext *parser = g_option_context_new("[URL]");
    g_option_context_set_summary(parser, "A WebKitGTK browser for WebKitWebDriver whose pages get --user-script at document start.");
    g_option_context_add_main_entries(parser, options, NULL);
    GError *error = NULL;
    if (!g_option_context_parse(parser, &argc, &argv, &error)) {
        g_printerr("authctl-webkit: %s\n", error->message);
        return 64;
    }
    g_option_context_free(parser);
    if (printVersion) {
        g_print("authctl-webkit (WebKitGTK %u.%u.%u)\n", webkit_get_major_version(), webkit_get_minor_version(), webkit_get_micro_version());
        return 0;
    }
    if (argc > 2) {
        g_printerr("authctl-webkit: one URL at most\n");
        return 64;
    }
    /* WebKit takes no proxy it cannot parse (a critical warning, and no proxy at all). */
    if (proxy && !g_uri_is_valid(proxy, G_URI_FLAGS_NONE, NULL)) {
        g_printerr("authctl-webkit: --proxy takes a URL (socks5://HOST:PORT, http://HOST:PORT), not '%s'\n", proxy);
        return 64;
    }
    /* Ended from here on as WebKitWebDriver ends it: a SIGTERM while the browser starts is kept
     * until the main loop runs, and ends it then. */
    g_unix_signal_add(SIGTERM, quit, NULL);
    g_unix_signal_add(SIGINT, quit, NULL);
    if (!gtk_init_check(NULL, NULL)) {
        g_printerr("authctl-webkit: no display (set DISPLAY, e.g. under Xvfb)\n");
        return 1;
    }

    /* As MiniBrowser under automation: nothing kept between sessions. */
    WebKitWebsiteDataManager *data = webkit_website_data_manager_new_ephemeral();
    if (proxy) {
        WebKitNetworkProxySettings *settings = webkit_network_proxy_settings_new(proxy, (const gchar *const *)ignoreHosts);
        webkit_website_data_manager_set_network_proxy_settings(data, WEBKIT_NETWORK_PROXY_MODE_CUSTOM, settings);
        webkit_network_proxy_settings_free(settings);
    }
    WebKitWebContext *context = webkit_web_context_new_with_website_data_manager(data);
    g_object_unref(data);
    contentManager = webkit_user_content_manager_new();
    refreshUserScript();
    webkit_web_context_set_automation_allowed(context, automation);
    g_signal_connect(context, "automation-started", G_CALLBACK(automationStarted), NULL);

    if (!automation) {
        WebKitWebView *view = newView(context);
        g_signal_connect_swapped(gtk_widget_get_toplevel(GTK_WIDGET(view)), "destroy", G_CALLBACK(gtk_main_quit), NULL);
        gtk_widget_show_all(gtk_widget_get_toplevel(GTK_WIDGET(view)));
        webkit_web_view_load_uri(view, argc == 2 ? argv[1] : "about:blank");
    }

    gtk_main();
    return 0;
}
