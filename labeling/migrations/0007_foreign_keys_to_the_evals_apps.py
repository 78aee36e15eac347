"""The labeling models' foreign keys point at the evals apps that now hold the judged
material's models; the columns and tables stay as they were.
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0001_initial"),
        ("decisions", "0001_initial"),
        ("judging", "0001_initial"),
        ("labeling", "0006_merge_0005_decision_labels_0005_outcomes"),
        ("rules", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="decisionlabel",
                    name="decision",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="labels",
                        to="decisions.decision",
                    ),
                ),
                migrations.AlterField(
                    model_name="hardmoment",
                    name="decision",
                    field=models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="hard_moment",
                        to="decisions.decision",
                    ),
                ),
                migrations.AlterField(
                    model_name="issuerow",
                    name="rule",
                    field=models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="issue_rows",
                        to="rules.rule",
                    ),
                ),
                migrations.AlterField(
                    model_name="issuerow",
                    name="rule_version",
                    field=models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="issue_rows",
                        to="rules.ruleversion",
                    ),
                ),
                migrations.AlterField(
                    model_name="issuerow",
                    name="transcript",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="issue_rows",
                        to="catalog.transcript",
                    ),
                ),
                migrations.AlterField(
                    model_name="mark",
                    name="verdict",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="marks",
                        to="judging.verdict",
                    ),
                ),
                migrations.AlterField(
                    model_name="outcomequestion",
                    name="agent",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="outcome_questions",
                        to="catalog.agent",
                    ),
                ),
                migrations.AlterField(
                    model_name="outcomerating",
                    name="transcript",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="outcome_ratings",
                        to="catalog.transcript",
                    ),
                ),
                migrations.AlterField(
                    model_name="promotiondecision",
                    name="judge",
                    field=models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        to="judging.judge",
                    ),
                ),
                migrations.AlterField(
                    model_name="promotiondecision",
                    name="replaced",
                    field=models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="replaced_by_decisions",
                        to="rules.ruleversion",
                    ),
                ),
                migrations.AlterField(
                    model_name="promotiondecision",
                    name="rule_version",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="decisions",
                        to="rules.ruleversion",
                    ),
                ),
                migrations.AlterField(
                    model_name="sampleitem",
                    name="transcript",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="sample_items",
                        to="catalog.transcript",
                    ),
                ),
                migrations.AlterField(
                    model_name="settlement",
                    name="verdict",
                    field=models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="settlement",
                        to="judging.verdict",
                    ),
                ),
                migrations.AlterField(
                    model_name="verdicttally",
                    name="verdict",
                    field=models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="tally",
                        serialize=False,
                        to="judging.verdict",
                    ),
                ),
            ],
            database_operations=[],
        ),
    ]
