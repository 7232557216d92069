"""A pair's two completions share its context, enforced by the database.

PostgreSQL: composite foreign keys (completion, context) -> completion (id, context).
SQLite (embedded default) cannot add constraints to a table, so triggers do the same check.
"""

from django.db import migrations

PG_FORWARD = [
    f"""ALTER TABLE annotation_pair ADD CONSTRAINT pair_{side}_same_context
        FOREIGN KEY (completion_{side}_id, context_id)
        REFERENCES completions_completion (id, context_id)
        ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED"""
    for side in ("a", "b")
]
PG_BACKWARD = [
    f"ALTER TABLE annotation_pair DROP CONSTRAINT pair_{side}_same_context" for side in ("a", "b")
]
SQLITE_CHECK = """
    SELECT RAISE(ABORT, 'pair completions must belong to the pair''s context')
    WHERE (SELECT context_id FROM completions_completion WHERE id = NEW.completion_a_id)
          IS NOT NEW.context_id
       OR (SELECT context_id FROM completions_completion WHERE id = NEW.completion_b_id)
          IS NOT NEW.context_id;
"""
SQLITE_FORWARD = [
    f"CREATE TRIGGER pair_same_context_{op} BEFORE {op.upper()} ON annotation_pair "
    f"BEGIN {SQLITE_CHECK} END"
    for op in ("insert", "update")
]
SQLITE_BACKWARD = [f"DROP TRIGGER pair_same_context_{op}" for op in ("insert", "update")]


def forward(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    statements = {"postgresql": PG_FORWARD, "sqlite": SQLITE_FORWARD}.get(vendor, [])
    for sql in statements:
        schema_editor.execute(sql)


def backward(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    statements = {"postgresql": PG_BACKWARD, "sqlite": SQLITE_BACKWARD}.get(vendor, [])
    for sql in statements:
        schema_editor.execute(sql)


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0001_initial"),
        ("completions", "0001_initial"),
    ]
    operations = [migrations.RunPython(forward, backward)]
