"""The evals app hands its models to the apps under evals/ (catalog, rules, judging, ...),
which took them over in their 0001_initial; the tables stay as they are.
"""

from django.db import migrations

# (new app label, model): every model the evals app held.
MOVED = [
    ("catalog", "agent"),
    ("catalog", "agentversion"),
    ("catalog", "transcript"),
    ("catalog", "turn"),
    ("rules", "rule"),
    ("rules", "ruleversion"),
    ("judging", "judge"),
    ("judging", "judgerun"),
    ("judging", "judgerunitem"),
    ("judging", "judgecacheentry"),
    ("judging", "verdict"),
    ("classifiers", "verdictcategory"),
    ("gating", "goldenset"),
    ("gating", "goldensetmember"),
    ("gating", "gate"),
    ("gating", "gatemetric"),
    ("gating", "gaterun"),
    ("conversation", "conversationscore"),
    ("webhooks", "webhook"),
    ("webhooks", "webhookdelivery"),
    ("trajectories", "axesreport"),
    ("decisions", "decisionkind"),
    ("decisions", "decisionkindversion"),
    ("decisions", "decision"),
    ("evalruns", "dataset"),
    ("evalruns", "datasetrow"),
    ("evalruns", "evalrun"),
    ("evalruns", "evalrunrow"),
]


def content_types_follow(apps, schema_editor):
    """Move each model's content type to its new app, so its permissions and admin history
    stay attached to it."""
    ContentType = apps.get_model("contenttypes", "ContentType")
    for label, model in MOVED:
        if ContentType.objects.filter(app_label=label, model=model).exists():
            ContentType.objects.filter(app_label="evals", model=model).delete()
        else:
            ContentType.objects.filter(app_label="evals", model=model).update(app_label=label)


def content_types_return(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    for label, model in MOVED:
        ContentType.objects.filter(app_label=label, model=model).update(app_label="evals")


class Migration(migrations.Migration):
    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("trajectories", "0001_initial"),
        ("evalruns", "0001_initial"),
        ("decisions", "0001_initial"),
        ("classifiers", "0001_initial"),
        ("conversation", "0001_initial"),
        ("gating", "0001_initial"),
        ("judging", "0001_initial"),
        ("rules", "0001_initial"),
        ("catalog", "0001_initial"),
        ("webhooks", "0001_initial"),
        ("evals", "0001_squashed"),
        ("labeling", "0007_foreign_keys_to_the_evals_apps"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveConstraint(
                    model_name="agentversion",
                    name="agent_version_unique",
                ),
                migrations.RemoveField(
                    model_name="axesreport",
                    name="agent_version",
                ),
                migrations.RemoveField(
                    model_name="transcript",
                    name="agent_version",
                ),
                migrations.RemoveField(
                    model_name="axesreport",
                    name="baseline",
                ),
                migrations.RemoveConstraint(
                    model_name="conversationscore",
                    name="conversation_score_key_unique",
                ),
                migrations.RemoveConstraint(
                    model_name="conversationscore",
                    name="conversation_score_range",
                ),
                migrations.RemoveConstraint(
                    model_name="dataset",
                    name="dataset_version_unique",
                ),
                migrations.RemoveConstraint(
                    model_name="dataset",
                    name="dataset_version_positive",
                ),
                migrations.RemoveConstraint(
                    model_name="datasetrow",
                    name="dataset_row_id_unique",
                ),
                migrations.RemoveIndex(
                    model_name="decision",
                    name="decision_kv_truth",
                ),
                migrations.RemoveConstraint(
                    model_name="decision",
                    name="decision_key_unique",
                ),
                migrations.RemoveConstraint(
                    model_name="decision",
                    name="decision_confidence_range",
                ),
                migrations.RemoveConstraint(
                    model_name="decision",
                    name="decision_has_a_moment",
                ),
                migrations.RemoveConstraint(
                    model_name="decisionkindversion",
                    name="decision_kind_version_unique",
                ),
                migrations.RemoveConstraint(
                    model_name="decisionkindversion",
                    name="decision_kind_version_positive",
                ),
                migrations.RemoveConstraint(
                    model_name="evalrun",
                    name="eval_run_threshold_range",
                ),
                migrations.RemoveConstraint(
                    model_name="evalrunrow",
                    name="eval_run_row_unique",
                ),
                migrations.RemoveConstraint(
                    model_name="evalrunrow",
                    name="eval_run_row_score_range",
                ),
                migrations.RemoveField(
                    model_name="gate",
                    name="golden_set",
                ),
                migrations.RemoveField(
                    model_name="gate",
                    name="judge",
                ),
                migrations.RemoveField(
                    model_name="gatemetric",
                    name="gate",
                ),
                migrations.RemoveField(
                    model_name="gatemetric",
                    name="rule",
                ),
                migrations.RemoveIndex(
                    model_name="gaterun",
                    name="gate_run_gate_status",
                ),
                migrations.RemoveConstraint(
                    model_name="goldenset",
                    name="golden_set_version_unique",
                ),
                migrations.RemoveConstraint(
                    model_name="goldenset",
                    name="golden_set_version_positive",
                ),
                migrations.RemoveConstraint(
                    model_name="goldensetmember",
                    name="golden_member_scenario_unique",
                ),
                migrations.RemoveField(
                    model_name="judgerun",
                    name="judge",
                ),
                migrations.DeleteModel(
                    name="JudgeCacheEntry",
                ),
                migrations.RemoveIndex(
                    model_name="judgerunitem",
                    name="judge_run_item_outcome",
                ),
                migrations.RemoveConstraint(
                    model_name="ruleversion",
                    name="rule_version_number_unique",
                ),
                migrations.RemoveConstraint(
                    model_name="ruleversion",
                    name="rule_version_number_positive",
                ),
                migrations.RemoveConstraint(
                    model_name="turn",
                    name="turn_index_unique",
                ),
                migrations.RemoveConstraint(
                    model_name="turn",
                    name="turn_asr_confidence_range",
                ),
                migrations.RemoveIndex(
                    model_name="verdict",
                    name="verdict_rv_judge",
                ),
                migrations.RemoveIndex(
                    model_name="verdict",
                    name="verdict_judge_run",
                ),
                migrations.RemoveConstraint(
                    model_name="verdict",
                    name="verdict_key_unique",
                ),
                migrations.RemoveConstraint(
                    model_name="verdict",
                    name="verdict_confidence_range",
                ),
                migrations.RemoveConstraint(
                    model_name="verdict",
                    name="verdict_unflagged_cites_no_turn",
                ),
                migrations.RemoveField(
                    model_name="verdictcategory",
                    name="verdict",
                ),
                migrations.RemoveField(
                    model_name="webhookdelivery",
                    name="webhook",
                ),
                migrations.RemoveField(
                    model_name="agentversion",
                    name="agent",
                ),
                migrations.DeleteModel(
                    name="AxesReport",
                ),
                migrations.RemoveField(
                    model_name="conversationscore",
                    name="judge",
                ),
                migrations.RemoveField(
                    model_name="conversationscore",
                    name="judge_run",
                ),
                migrations.RemoveField(
                    model_name="conversationscore",
                    name="transcript",
                ),
                migrations.RemoveField(
                    model_name="datasetrow",
                    name="dataset",
                ),
                migrations.RemoveField(
                    model_name="decision",
                    name="kind",
                ),
                migrations.RemoveField(
                    model_name="decision",
                    name="kind_version",
                ),
                migrations.RemoveField(
                    model_name="decision",
                    name="transcript",
                ),
                migrations.RemoveField(
                    model_name="decisionkindversion",
                    name="kind",
                ),
                migrations.RemoveField(
                    model_name="evalrun",
                    name="agent_version",
                ),
                migrations.RemoveField(
                    model_name="evalrun",
                    name="baseline",
                ),
                migrations.RemoveField(
                    model_name="evalrun",
                    name="dataset",
                ),
                migrations.RemoveField(
                    model_name="evalrunrow",
                    name="dataset_row",
                ),
                migrations.RemoveField(
                    model_name="evalrunrow",
                    name="run",
                ),
                migrations.RemoveField(
                    model_name="evalrunrow",
                    name="transcript",
                ),
                migrations.DeleteModel(
                    name="GateMetric",
                ),
                migrations.RemoveField(
                    model_name="gaterun",
                    name="baseline",
                ),
                migrations.RemoveField(
                    model_name="gaterun",
                    name="candidate",
                ),
                migrations.RemoveField(
                    model_name="gaterun",
                    name="gate",
                ),
                migrations.RemoveField(
                    model_name="gaterun",
                    name="golden_set",
                ),
                migrations.RemoveField(
                    model_name="gaterun",
                    name="judge",
                ),
                migrations.RemoveField(
                    model_name="gaterun",
                    name="rule_versions",
                ),
                migrations.RemoveField(
                    model_name="goldensetmember",
                    name="golden_set",
                ),
                migrations.RemoveField(
                    model_name="goldensetmember",
                    name="transcript",
                ),
                migrations.RemoveField(
                    model_name="judgerunitem",
                    name="run",
                ),
                migrations.RemoveField(
                    model_name="judgerunitem",
                    name="transcript",
                ),
                migrations.RemoveField(
                    model_name="ruleversion",
                    name="rule",
                ),
                migrations.RemoveField(
                    model_name="turn",
                    name="transcript",
                ),
                migrations.RemoveField(
                    model_name="verdict",
                    name="judge",
                ),
                migrations.RemoveField(
                    model_name="verdict",
                    name="judge_run",
                ),
                migrations.RemoveField(
                    model_name="verdict",
                    name="rule_version",
                ),
                migrations.RemoveField(
                    model_name="verdict",
                    name="transcript",
                ),
                migrations.DeleteModel(
                    name="VerdictCategory",
                ),
                migrations.DeleteModel(
                    name="Webhook",
                ),
                migrations.DeleteModel(
                    name="WebhookDelivery",
                ),
                migrations.DeleteModel(
                    name="Agent",
                ),
                migrations.DeleteModel(
                    name="ConversationScore",
                ),
                migrations.DeleteModel(
                    name="Decision",
                ),
                migrations.DeleteModel(
                    name="DecisionKind",
                ),
                migrations.DeleteModel(
                    name="DecisionKindVersion",
                ),
                migrations.DeleteModel(
                    name="Dataset",
                ),
                migrations.DeleteModel(
                    name="DatasetRow",
                ),
                migrations.DeleteModel(
                    name="EvalRun",
                ),
                migrations.DeleteModel(
                    name="EvalRunRow",
                ),
                migrations.DeleteModel(
                    name="AgentVersion",
                ),
                migrations.DeleteModel(
                    name="Gate",
                ),
                migrations.DeleteModel(
                    name="GateRun",
                ),
                migrations.DeleteModel(
                    name="GoldenSet",
                ),
                migrations.DeleteModel(
                    name="GoldenSetMember",
                ),
                migrations.DeleteModel(
                    name="JudgeRunItem",
                ),
                migrations.DeleteModel(
                    name="Rule",
                ),
                migrations.DeleteModel(
                    name="Turn",
                ),
                migrations.DeleteModel(
                    name="Judge",
                ),
                migrations.DeleteModel(
                    name="JudgeRun",
                ),
                migrations.DeleteModel(
                    name="RuleVersion",
                ),
                migrations.DeleteModel(
                    name="Transcript",
                ),
                migrations.DeleteModel(
                    name="Verdict",
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(content_types_follow, content_types_return),
    ]
