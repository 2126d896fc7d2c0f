from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("web", "0003_playback_and_forks"),
    ]

    operations = [
        migrations.AddField(
            model_name="comparisonrun",
            name="label",
            field=models.CharField(blank=True, max_length=200),
        ),
    ]
