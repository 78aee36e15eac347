"""Foreign keys checked once per statement instead of once per row, for the tables a COPY fills.

PostgreSQL checks a declared foreign key with one lookup of the parent row for every row written:
on the verdict table, three keys cost three times a bare COPY of the same rows (issue 26,
docs/operations.md). A key registered here (`bulk_key_register(Verdict, "judge")`, its field
declared with `db_constraint=False`) is kept by triggers instead, as strictly:

- a statement that writes rows into the child table locks every parent they name (FOR KEY SHARE,
  as the declared key does) and fails with `foreign_key_violation` (an IntegrityError) naming the
  first missing one, in one join of the statement's rows (its transition table) with the parent;
- a statement that deletes parent rows, or changes their key, fails the same way while any child
  row still names one (Django deletes a call's verdicts before the call, and `PROTECT` keeps a
  judge or rule version with verdicts from the ORM; this also stops raw SQL).

The declared key is DEFERRABLE INITIALLY DEFERRED; these checks are immediate, at the end of each
statement: no writer here adds a verdict before its parents or deletes a parent before its
verdicts. TRUNCATE is not checked (as with a declared key under TRUNCATE ... CASCADE, the tests'
flush). SQLite (the demo, one writer at a time) checks the writes into the child table per row;
its flush deletes tables in any order, so parents are kept there by `PROTECT` and the cascade.
The triggers are (re)installed after every migrate, like the tally's.
"""

from dataclasses import dataclass

from django.db import connections

from core.sql import triggers_install


@dataclass(frozen=True)
class BulkKey:
    table: str
    column: str
    parent: str
    parent_column: str

    @property
    def name(self) -> str:
        return f"docket_key_{self.table}_{self.column}"


KEYS: list[BulkKey] = []


def bulk_key_register(model, field_name: str) -> None:
    """Keep `model.field_name` (a ForeignKey with db_constraint=False) by statement triggers."""
    field = model._meta.get_field(field_name)
    if field.db_constraint:
        raise ValueError(f"{model.__name__}.{field_name}: declare it with db_constraint=False")
    target = field.target_field
    key = BulkKey(model._meta.db_table, field.column, target.model._meta.db_table, target.column)
    if key not in KEYS:
        KEYS.append(key)


def _violation(key: BulkKey, value: str, what: str) -> str:
    return (
        "RAISE EXCEPTION USING ERRCODE = 'foreign_key_violation', MESSAGE = format("
        f"'{what}', {value}), "
        f"CONSTRAINT = '{key.name}'"
    )


def _postgres_sql(key: BulkKey) -> list[str]:
    t, c, p, pc, n = key.table, key.column, key.parent, key.parent_column, key.name
    child_fail = _violation(
        key,
        "missing",
        f'insert or update on table "{t}" violates foreign key {n}: '
        f'{c}=%s is not present in table "{p}"',
    )
    parent_fail = _violation(
        key,
        "held",
        f'update or delete on table "{p}" violates foreign key {n}: '
        f'{pc}=%s is still referenced from table "{t}"',
    )
    return [
        # Lock the parents the rows name and count them against the distinct names: two hash
        # passes over the statement's rows. Which name is missing is looked for only on failure.
        f"""CREATE OR REPLACE FUNCTION {n}_child() RETURNS trigger
LANGUAGE plpgsql AS $body$
DECLARE named bigint; held bigint; missing bigint;
BEGIN
    SELECT count(*) INTO named FROM (SELECT DISTINCT {c} FROM new_rows WHERE {c} IS NOT NULL) d;
    WITH locked AS (SELECT 1 FROM {p} WHERE {pc} IN (SELECT {c} FROM new_rows) FOR KEY SHARE)
    SELECT count(*) INTO held FROM locked;
    IF held < named THEN
        SELECT r.{c} INTO missing FROM new_rows r
         WHERE r.{c} IS NOT NULL AND NOT EXISTS (SELECT 1 FROM {p} WHERE {pc} = r.{c}) LIMIT 1;
        {child_fail};
    END IF;
    RETURN NULL;
END
$body$""",
        f"""CREATE OR REPLACE FUNCTION {n}_parent() RETURNS trigger
LANGUAGE plpgsql AS $body$
DECLARE held bigint;
BEGIN
    IF TG_OP = 'DELETE' THEN
        SELECT o.{pc} INTO held FROM old_rows o
         WHERE EXISTS (SELECT 1 FROM {t} WHERE {c} = o.{pc}) LIMIT 1;
    ELSE
        SELECT o.{pc} INTO held FROM old_rows o
         WHERE NOT EXISTS (SELECT 1 FROM new_rows r WHERE r.{pc} = o.{pc})
           AND EXISTS (SELECT 1 FROM {t} WHERE {c} = o.{pc}) LIMIT 1;
    END IF;
    IF FOUND THEN {parent_fail}; END IF;
    RETURN NULL;
END
$body$""",
    ] + [
        s
        for table, trigger, event, tables, fn in (
            (t, "insert", "INSERT", "NEW TABLE AS new_rows", "child"),
            (t, "update", "UPDATE", "NEW TABLE AS new_rows", "child"),
            (p, "delete", "DELETE", "OLD TABLE AS old_rows", "parent"),
            (p, "rekey", "UPDATE", "OLD TABLE AS old_rows NEW TABLE AS new_rows", "parent"),
        )
        for s in (
            f"DROP TRIGGER IF EXISTS {n}_{trigger} ON {table}",
            (
                f"CREATE TRIGGER {n}_{trigger} AFTER {event} ON {table} REFERENCING {tables} "
                f"FOR EACH STATEMENT EXECUTE FUNCTION {n}_{fn}()"
            ),
        )
    ]


def _sqlite_sql(key: BulkKey) -> list[str]:
    t, c, p, pc, n = key.table, key.column, key.parent, key.parent_column, key.name
    out = []
    for event in ("INSERT", "UPDATE"):
        name = f"{n}_{event.lower()}"
        out += [
            f"DROP TRIGGER IF EXISTS {name}",
            (
                f"CREATE TRIGGER {name} BEFORE {event} ON {t} FOR EACH ROW "
                f"WHEN NEW.{c} IS NOT NULL AND NOT EXISTS "
                f"(SELECT 1 FROM {p} WHERE {pc} = NEW.{c}) BEGIN "
                f"SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: {t}.{c} ({n})'); END"
            ),
        ]
    return out


def bulk_key_triggers_install(*, using=None) -> bool:
    """(Re)create the triggers of every registered key (idempotent); False when a table is not
    there yet."""
    if not KEYS:
        return False
    return triggers_install(
        connections[using or "default"],
        what="bulk keys",
        tables={k.table for k in KEYS} | {k.parent for k in KEYS},
        postgres=lambda: [s for k in KEYS for s in _postgres_sql(k)],
        sqlite=lambda: [s for k in KEYS for s in _sqlite_sql(k)],
    )
