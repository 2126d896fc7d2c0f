import django.db.models
from django.db import migrations

import kubeviz.web.services.names


class Migration(migrations.Migration):
    dependencies = [
        ("web", "0008_run_max_events"),
    ]

    operations = [
        migrations.AddField(
            model_name="cluster",
            name="source_name",
            field=django.db.models.CharField(
                default="cluster.yaml",
                max_length=200,
                validators=[kubeviz.web.services.names.VisibleName("file name")],
            ),
        ),
    ]
