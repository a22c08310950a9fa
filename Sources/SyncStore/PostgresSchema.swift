/// The tables and functions of a ``PostgresStore``, created and migrated by authctl: one `DO`
/// block, run under a transaction-scoped advisory lock so clients that find the schema missing or
/// old at once migrate it once, each version's step applied only to a schema older than it.
enum PostgresSchema {
    static let migration = #"""
    DO $migrate$
    DECLARE current integer;
    BEGIN
      PERFORM pg_advisory_xact_lock(hashtext('authctl schema'));
      CREATE TABLE IF NOT EXISTS authctl_schema (version integer NOT NULL);
      SELECT coalesce(max(version), 0) INTO current FROM authctl_schema;
      IF current < 1 THEN
        CREATE TABLE IF NOT EXISTS authctl_accounts (
          account text PRIMARY KEY,
          head bigint NOT NULL DEFAULT 0,
          snapshot bigint NOT NULL DEFAULT 0,
          created timestamptz NOT NULL DEFAULT now());
        CREATE TABLE IF NOT EXISTS authctl_changes (
          account text NOT NULL REFERENCES authctl_accounts ON DELETE CASCADE,
          sequence bigint NOT NULL, id bytea NOT NULL, bytes bytea NOT NULL,
          PRIMARY KEY (account, sequence));
        CREATE TABLE IF NOT EXISTS authctl_ids (
          account text NOT NULL REFERENCES authctl_accounts ON DELETE CASCADE,
          id bytea NOT NULL, sequence bigint NOT NULL,
          PRIMARY KEY (account, id));
        CREATE TABLE IF NOT EXISTS authctl_snapshot (
          account text NOT NULL REFERENCES authctl_accounts ON DELETE CASCADE,
          part integer NOT NULL, id bytea NOT NULL, bytes bytea NOT NULL,
          PRIMARY KEY (account, part));
        CREATE TABLE IF NOT EXISTS authctl_metadata (
          account text NOT NULL REFERENCES authctl_accounts ON DELETE CASCADE,
          key text NOT NULL, version bigint NOT NULL, bytes bytea NOT NULL,
          PRIMARY KEY (account, key));
        -- Appends under the account's row lock: ids already given keep their sequence.
        CREATE OR REPLACE FUNCTION authctl_append(acc text, ids bytea[], objs bytea[]) RETURNS SETOF bigint
        LANGUAGE plpgsql AS $f$
        DECLARE h bigint; s bigint; i integer; added boolean := false;
        BEGIN
          SELECT head INTO h FROM authctl_accounts WHERE account = acc FOR UPDATE;
          IF NOT FOUND THEN RETURN; END IF;
          FOR i IN 1 .. coalesce(array_length(ids, 1), 0) LOOP
            SELECT sequence INTO s FROM authctl_ids WHERE account = acc AND id = ids[i];
            IF NOT FOUND THEN
              h := h + 1; s := h; added := true;
              INSERT INTO authctl_ids VALUES (acc, ids[i], s);
              INSERT INTO authctl_changes VALUES (acc, s, ids[i], objs[i]);
            END IF;
            RETURN NEXT s;
          END LOOP;
          IF added THEN
            UPDATE authctl_accounts SET head = h WHERE account = acc;
            PERFORM pg_notify('authctl_' || md5(acc), h::text);
          END IF;
        END $f$;
        -- Replaces the log up to `through` by the parts: 0 done, 1 conflict (current snapshot),
        -- 2 past the head (current head).
        CREATE OR REPLACE FUNCTION authctl_compact(acc text, through bigint, ids bytea[], objs bytea[])
        RETURNS TABLE (outcome integer, current bigint) LANGUAGE plpgsql AS $f$
        DECLARE h bigint; s bigint;
        BEGIN
          SELECT head, snapshot INTO h, s FROM authctl_accounts WHERE account = acc FOR UPDATE;
          IF NOT FOUND THEN RETURN; END IF;
          IF through <= s THEN RETURN QUERY SELECT 1, s; RETURN; END IF;
          IF through > h THEN RETURN QUERY SELECT 2, h; RETURN; END IF;
          DELETE FROM authctl_snapshot WHERE account = acc;
          INSERT INTO authctl_snapshot
            SELECT acc, n::integer - 1, ids[n], objs[n] FROM generate_subscripts(ids, 1) AS n;
          DELETE FROM authctl_changes WHERE account = acc AND sequence <= through;
          UPDATE authctl_accounts SET snapshot = through WHERE account = acc;
          RETURN QUERY SELECT 0, through;
        END $f$;
        -- Compare-and-swap: (true, new version), or (false, the current one; 0 when absent).
        CREATE OR REPLACE FUNCTION authctl_set_metadata(acc text, k text, b bytea, expected bigint)
        RETURNS TABLE (done boolean, version bigint) LANGUAGE plpgsql AS $f$
        DECLARE v bigint;
        BEGIN
          PERFORM 1 FROM authctl_accounts WHERE account = acc;
          IF NOT FOUND THEN RETURN; END IF;
          IF expected = 0 THEN
            INSERT INTO authctl_metadata VALUES (acc, k, 1, b) ON CONFLICT DO NOTHING;
            IF FOUND THEN v := 1; END IF;
          ELSE
            UPDATE authctl_metadata m SET version = m.version + 1, bytes = b
             WHERE m.account = acc AND m.key = k AND m.version = expected RETURNING m.version INTO v;
          END IF;
          IF v IS NOT NULL THEN
            PERFORM pg_notify('authctl_' || md5(acc), 'metadata');
            RETURN QUERY SELECT true, v; RETURN;
          END IF;
          SELECT m.version INTO v FROM authctl_metadata m WHERE m.account = acc AND m.key = k;
          RETURN QUERY SELECT false, coalesce(v, 0);
        END $f$;
        INSERT INTO authctl_schema VALUES (1);
      END IF;
    END $migrate$
    """#
}
