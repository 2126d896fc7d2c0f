"""The "GPU trace (CSV)" upload: two CSVs become a stored Scenario, or nothing is stored."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from kubeviz.web.models import Scenario
from scheduler_core.documents.scenario import load_scenario

DATA = Path(__file__).parents[1] / "core" / "data" / "gpu"
URL = "/scenarios/new/gpu-trace/"


def post(client: Client, pods: bytes | None = None, **fields: Any) -> Any:
    data: dict[str, Any] = {
        "name": "my-trace",
        "visibility": "public",
        "protocol": "tuned",
        "target_percent": "120",
        "arrival_interval": "10ms",
        "nodes_csv": SimpleUploadedFile("nodes.csv", (DATA / "nodes.csv").read_bytes(), "text/csv"),
        "pods_csv": SimpleUploadedFile("pods.csv", pods or (DATA / "pods.csv").read_bytes(), "text/csv"),
        **fields,
    }
    return client.post(URL, data)


@pytest.mark.django_db
def test_the_url_is_named() -> None:
    assert reverse("scenario-new-gpu-trace") == URL


@pytest.mark.django_db
def test_two_csvs_become_a_scenario(logged_in_client: Client) -> None:
    page = logged_in_client.get(URL)
    assert page.status_code == 200
    assert b"Nodes (CSV)" in page.content
    assert b"Pods (CSV)" in page.content
    response = post(logged_in_client)
    scenario = Scenario.objects.get(name="my-trace")
    assert response.status_code == 302
    assert response["Location"] == scenario.get_absolute_url()
    loaded = load_scenario(scenario.document, "my-trace.yaml")
    assert len(loaded.nodes) == 16
    assert loaded.gpu_workload is not None
    assert (loaded.gpu_workload.protocol, loaded.gpu_workload.target_percent) == ("tuned", 120)
    assert "openb-pod-7285" in scenario.document


@pytest.mark.django_db
def test_a_bad_row_names_file_line_and_column_and_saves_nothing(logged_in_client: Client) -> None:
    pods = (
        (DATA / "pods.csv")
        .read_bytes()
        .replace(b"openb-pod-0002,12000,24576,1,1000", b"openb-pod-0002,12000,24576,3,500")
    )
    response = post(logged_in_client, pods)
    assert response.status_code == 400
    assert "pods.csv:4: column 5 (gpu_milli): a share below 1000 needs num_gpu 1, not 3" in response.content.decode()
    assert "nothing was saved" in response.content.decode()
    assert not Scenario.objects.filter(name="my-trace").exists()


@pytest.mark.django_db
def test_form_fields_are_checked(logged_in_client: Client) -> None:
    response = post(logged_in_client, target_percent="0", arrival_interval="soon")
    assert response.status_code == 400
    text = response.content.decode()
    assert "Ensure this value is greater than or equal to 1." in text
    assert "soon" in text
    wrong = post(logged_in_client, pods_csv=SimpleUploadedFile("pods.yaml", b"x", "text/yaml"))
    assert "&#x27;pods.yaml&#x27; is not a .csv file." in wrong.content.decode()
    assert not Scenario.objects.filter(name="my-trace").exists()


@pytest.mark.django_db
def test_a_file_over_the_limit_is_refused(logged_in_client: Client, settings: Any) -> None:
    settings.KUBEVIZ_MAX_UPLOAD_BYTES = 1000
    response = post(logged_in_client)
    assert "The file is" in response.content.decode()
    assert "the limit is" in response.content.decode()
    assert not Scenario.objects.filter(name="my-trace").exists()


@pytest.mark.django_db
def test_the_upload_needs_a_login(client: Client) -> None:
    response = client.get(URL)
    assert response.status_code == 302
    assert "login" in response["Location"]
