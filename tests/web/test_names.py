"""Names refuse bidi controls and invisible characters, with the field and the character named,
wherever a name enters: the forms, the JSON API, a document's metadata.name, the policy editor,
the GPU trace upload and sign-up (kubeviz/web/services/names.py, docs/limits.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from kubeviz.web.forms import GpuTraceUploadForm, ScenarioUploadForm
from kubeviz.web.models import Cluster, Policy, Scenario
from kubeviz.web.services.names import VisibleName, check_document_name, hidden_character, name_problem
from scheduler_core.documents.errors import LoadError

RLO = "\u202e"  # RIGHT-TO-LEFT OVERRIDE: "‮gnp.exe" shows as "exe.png"
SPOOF = f"{RLO}gnp.exe\u200b"
REPO = Path(__file__).resolve().parents[2]
GPU = REPO / "tests" / "core" / "data" / "gpu"
KUBECTL = (REPO / "tests" / "core" / "data" / "kubectl-cluster.yaml").read_text()


def scenario_document(name: str) -> str:
    return (
        f'apiVersion: kubeviz.dev/v1\nkind: Scenario\nmetadata:\n  name: "{name}"\nspec:\n'
        '  nodes: [{name: node-a, allocatable: {cpu: "2", memory: 4Gi}}]\n'
    )


def policy_document(name: str) -> str:
    return (
        f'apiVersion: kubeviz.dev/v1\nkind: Policy\nmetadata:\n  name: "{name}"\nspec:\n'
        "  configuration:\n    apiVersion: kubescheduler.config.k8s.io/v1\n    kind: KubeSchedulerConfiguration\n"
    )


# The rule, one character at a time

REFUSED = [
    ("\u202a", "U+202A LEFT-TO-RIGHT EMBEDDING"),
    ("\u202b", "U+202B RIGHT-TO-LEFT EMBEDDING"),
    ("\u202c", "U+202C POP DIRECTIONAL FORMATTING"),
    ("\u202d", "U+202D LEFT-TO-RIGHT OVERRIDE"),
    ("\u202e", "U+202E RIGHT-TO-LEFT OVERRIDE"),
    ("\u2066", "U+2066 LEFT-TO-RIGHT ISOLATE"),
    ("\u2067", "U+2067 RIGHT-TO-LEFT ISOLATE"),
    ("\u2068", "U+2068 FIRST STRONG ISOLATE"),
    ("\u2069", "U+2069 POP DIRECTIONAL ISOLATE"),
    ("\u200b", "U+200B ZERO WIDTH SPACE"),
    ("\u200c", "U+200C ZERO WIDTH NON-JOINER"),
    ("\u200d", "U+200D ZERO WIDTH JOINER"),
    ("\u200e", "U+200E LEFT-TO-RIGHT MARK"),
    ("\u200f", "U+200F RIGHT-TO-LEFT MARK"),
    ("\ufeff", "U+FEFF ZERO WIDTH NO-BREAK SPACE"),
    ("\u2060", "U+2060 WORD JOINER"),
    ("\u2061", "U+2061 FUNCTION APPLICATION"),
    ("\u2064", "U+2064 INVISIBLE PLUS"),
    ("\u00ad", "U+00AD SOFT HYPHEN"),
    ("\u0000", "U+0000"),  # Cc, and unnamed
    ("\t", "U+0009"),
    ("\x9b", "U+009B"),  # C1 control
    ("\ue000", "U+E000"),  # Co: private use
    ("\U000e0001", "U+E0001 LANGUAGE TAG"),  # Cf: tag characters
    ("\u0378", "U+0378"),  # Cn: unassigned
    ("\u2028", "U+2028 LINE SEPARATOR"),
    ("\u2029", "U+2029 PARAGRAPH SEPARATOR"),
    ("\u3164", "U+3164 HANGUL FILLER"),  # a letter that prints as nothing
    ("\u2800", "U+2800 BRAILLE PATTERN BLANK"),
]
ALLOWED = [
    "nginx",
    "Bin packing (copy)",
    "zürich-ü",
    "日本語のシナリオ",
    "שלום",
    "مرحبا",
    "emoji 🚀",
    "a b",
    "naïve café",
]


@pytest.mark.parametrize(("char", "described"), REFUSED)
def test_each_hidden_character_is_refused_with_its_name_and_position(char: str, described: str) -> None:
    name = f"ab{char}cd"
    assert hidden_character(name) == (3, char)
    assert name_problem(name) == (
        f"holds {described} at character 3: names may not contain bidi controls or invisible "
        "characters, which make a name show as something else"
    )
    with pytest.raises(ValidationError) as refused:
        VisibleName("username")(name)
    assert refused.value.messages == [f"The username {name_problem(name)}."]


@pytest.mark.parametrize("name", ALLOWED)
def test_names_in_any_script_are_taken(name: str) -> None:
    assert hidden_character(name) is None
    VisibleName()(name)


def test_the_first_hidden_character_is_the_one_named() -> None:
    assert hidden_character(SPOOF) == (1, RLO)
    assert hidden_character("ok\u200bthen\u202e") == (3, "\u200b")


def test_a_document_name_is_refused_with_its_line_and_field() -> None:
    with pytest.raises(LoadError) as refused:
        check_document_name(SPOOF, scenario_document(SPOOF), "spoof.yaml")
    (problem,) = refused.value.problems
    assert (problem.source, problem.line, problem.path) == ("spoof.yaml", 4, "metadata.name")
    assert problem.message.startswith("holds U+202E RIGHT-TO-LEFT OVERRIDE at character 1")
    assert problem.message.endswith("; fix it, or give the name in the form's name field")


def test_a_name_from_the_file_name_says_so() -> None:
    with pytest.raises(LoadError) as refused:
        check_document_name(f"a{RLO}b", "apiVersion: v1\nkind: Pod\n", f"a{RLO}b.yaml")
    assert str(refused.value).startswith(f"a{RLO}b.yaml: the name taken from the file name holds U+202E")


# Every door a name comes in by


@pytest.fixture
def signed_in(logged_in_client: Client) -> Client:
    return logged_in_client


@pytest.mark.django_db
def test_the_upload_form_refuses_the_name_field(signed_in: Client) -> None:
    response = signed_in.post(
        reverse("scenario-new"), {"name": SPOOF, "visibility": "public", "text": scenario_document("fine")}
    )
    assert response.status_code == 400
    assert "The name holds U+202E RIGHT-TO-LEFT OVERRIDE at character 1" in response.content.decode()
    assert not Scenario.objects.exists()


@pytest.mark.django_db
def test_the_upload_form_refuses_a_metadata_name_when_the_name_is_empty(signed_in: Client) -> None:
    response = signed_in.post(
        reverse("scenario-new"), {"name": "", "visibility": "public", "text": scenario_document(SPOOF)}
    )
    html = response.content.decode()
    assert response.status_code == 400
    assert "scenario.yaml:4 metadata.name: holds U+202E RIGHT-TO-LEFT OVERRIDE at character 1" in html
    assert not Scenario.objects.exists()
    # A name of the form's own wins over the document's, which is then not used.
    signed_in.post(reverse("scenario-new"), {"name": "fine", "visibility": "public", "text": scenario_document(SPOOF)})
    assert Scenario.objects.get().name == "fine"


def test_an_uploaded_file_with_a_spoofing_name_is_refused() -> None:
    """Django's multipart parser already drops unprintable characters from file names; the form
    checks them all the same, since the name becomes the document's source (and its name)."""
    upload = SimpleUploadedFile(f"{RLO}lmay.exe.yaml", scenario_document("fine").encode())
    form = ScenarioUploadForm({"name": "", "visibility": "public"}, {"file": upload})
    assert not form.is_valid()
    assert form.errors["file"] == [f"The file name {name_problem(upload.name)}."]
    pasted = ScenarioUploadForm({"visibility": "public", "text": "x", "source_name": f"a{RLO}.yaml"})
    assert not pasted.is_valid()
    assert pasted.errors["source_name"][0].startswith("The file name holds U+202E")


@pytest.mark.django_db
def test_the_api_refuses_the_name_and_the_metadata_name(user: Any) -> None:
    client = APIClient()
    client.force_authenticate(user)
    url = reverse("api-scenario-list")
    named = client.post(url, {"name": SPOOF, "text": scenario_document("fine")}, format="json")
    assert named.status_code == 400
    assert named.json()["name"][0].startswith("The name holds U+202E RIGHT-TO-LEFT OVERRIDE at character 1")
    derived = client.post(url, {"text": scenario_document(f"ok{RLO}")}, format="json")
    assert derived.status_code == 400
    problem = derived.json()["problems"][0]
    assert (problem["line"], problem["path"]) == (4, "metadata.name")
    assert problem["message"].startswith("holds U+202E RIGHT-TO-LEFT OVERRIDE at character 3")
    policy = client.post(reverse("api-policy-list"), {"document": policy_document(SPOOF)}, format="json")
    assert policy.status_code == 400
    assert policy.json()["problems"][0]["path"] == "metadata.name"
    assert not Scenario.objects.exists()
    assert not Policy.objects.exists()


@pytest.mark.django_db
def test_the_policy_editor_refuses_the_name_and_the_metadata_name(signed_in: Client) -> None:
    url = reverse("policy-new")
    named = signed_in.post(url, {"name": f"my{RLO}", "visibility": "public", "document": policy_document("fine")})
    assert "The name holds U+202E RIGHT-TO-LEFT OVERRIDE at character 3" in named.content.decode()
    derived = signed_in.post(url, {"name": "", "visibility": "public", "document": policy_document(SPOOF)})
    assert "policy.yaml:4 metadata.name: holds U+202E" in derived.content.decode()
    assert not Policy.objects.exists()


@pytest.mark.django_db
def test_the_gpu_trace_upload_refuses_the_name_and_csv_file_names(signed_in: Client) -> None:
    def post(name: str) -> str:
        data = {
            "name": name,
            "visibility": "public",
            "protocol": "tuned",
            "target_percent": "120",
            "arrival_interval": "10ms",
            "nodes_csv": SimpleUploadedFile("nodes.csv", (GPU / "nodes.csv").read_bytes(), "text/csv"),
            "pods_csv": SimpleUploadedFile("pods.csv", (GPU / "pods.csv").read_bytes(), "text/csv"),
        }
        return signed_in.post(reverse("scenario-new-gpu-trace"), data).content.decode()

    assert "The name holds U+200B ZERO WIDTH SPACE at character 4" in post("gpu\u200btrace")
    assert not Scenario.objects.exists()
    nodes = SimpleUploadedFile(f"{RLO}vsc.csv", (GPU / "nodes.csv").read_bytes())
    form = GpuTraceUploadForm({"name": "gpu"}, {"nodes_csv": nodes})
    assert not form.is_valid()
    assert form.errors["nodes_csv"] == [f"The file name {name_problem(nodes.name)}."]


@pytest.mark.django_db
def test_cluster_forms_refuse_hidden_characters(signed_in: Client, builtins: None) -> None:
    url = reverse("cluster-new")
    uploaded = signed_in.post(url, {"kind": "upload", "name": SPOOF, "visibility": "public", "text": KUBECTL})
    assert "The name holds U+202E" in uploaded.content.decode()
    shaped = signed_in.post(
        url,
        {"kind": "shape", "name": "my\ufeffcluster", "count": "3", "cpu": "8", "memory": "32Gi", "pods": "110",
         "zones": "1", "name_prefix": "node-", "visibility": "public"},
    )  # fmt: skip
    assert "The name holds U+FEFF ZERO WIDTH NO-BREAK SPACE at character 3" in shaped.content.decode()
    scenario = Scenario.objects.get(slug="mixed-small")
    saved = signed_in.post(reverse("scenario-save-nodes", args=[scenario.slug]), {"name": f"x{RLO}"}, follow=True)
    assert "Could not save its nodes: name: The name holds U+202E" in saved.content.decode()
    assert not Cluster.objects.filter(builtin=False).exists()


@pytest.mark.django_db
def test_sign_up_refuses_a_spoofing_username_naming_the_character(client: Client) -> None:
    response = client.post(
        reverse("signup"), {"username": f"admin{RLO}", "password1": "correct-horse-9", "password2": "correct-horse-9"}
    )
    html = response.content.decode()
    assert response.status_code == 400
    assert "The username holds U+202E RIGHT-TO-LEFT OVERRIDE at character 6" in html
    assert "Enter a valid username" not in html  # one message, the one that says which character


@pytest.mark.django_db
def test_the_admin_refuses_them_too() -> None:
    """The models carry the same validator, so a ModelForm (the admin's) refuses alike."""
    scenario = Scenario(slug="x", name=SPOOF, document="")
    with pytest.raises(ValidationError) as refused:
        scenario.full_clean()
    assert refused.value.message_dict["name"][0].startswith("The name holds U+202E")
