"""Forms of the web app. Size and encoding are checked here, before any document is parsed."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

from django import forms
from django.conf import settings
from django.contrib.auth.forms import UserCreationForm, UsernameField
from django.core.files.uploadedfile import UploadedFile
from django.core.validators import ProhibitNullCharactersValidator
from django.http import QueryDict

from scheduler_core.documents import (
    DEFAULT_ARRIVAL_INTERVAL_MS,
    DEFAULT_TARGET_PERCENT,
    MAX_NODES,
    PROTOCOLS,
    lone_surrogate,
    not_utf8,
    parse_duration_ms,
)

from .access import visible_clusters
from .models import Cluster, Visibility
from .request_types import Viewer
from .services.names import VisibleName
from .services.read_limits import size_error
from .services.scenarios import Upload

__all__ = [
    "DocumentTextField",
    "ScenarioUploadForm",
    "GpuTraceUploadForm",
    "ClusterUploadForm",
    "ClusterShapeForm",
    "SaveNodesForm",
    "SignupForm",
    "DOCUMENT_EXTENSIONS",
]

DOCUMENT_EXTENSIONS = (".yaml", ".yml", ".json")
PASTED_SOURCE = "scenario.yaml"


class DocumentTextField(forms.CharField):
    """A pasted document, kept byte for byte (no stripping) and without Django's blanket refusal
    of NUL characters: the document's reader refuses those itself, naming their line."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(strip=False, **kwargs)
        self.validators = [v for v in self.validators if not isinstance(v, ProhibitNullCharactersValidator)]

    def validate(self, value: Any) -> None:
        """A lone surrogate (JSON's ``"\\ud800"``, through the API) is no text a reader can take."""
        super().validate(value)
        found = lone_surrogate(value) if isinstance(value, str) else None
        if found is not None:
            line, message = found
            raise forms.ValidationError(f"The text is not valid Unicode: line {line}, {message}.")


def visibility_field(what: str) -> forms.ChoiceField:
    """The public / private choice every upload and save form asks, for ``what`` ("scenarios")."""
    return forms.ChoiceField(
        choices=Visibility.choices,
        initial=Visibility.PUBLIC,
        widget=forms.RadioSelect,
        help_text=f"Public {what} are listed for everyone; private ones only for you.",
    )


class ScenarioUploadForm(forms.Form):
    """A scenario document from a file or pasted text; ``upload()`` gives what to store."""

    pasted_source = PASTED_SOURCE  # what problems call pasted text

    name = forms.CharField(
        max_length=120,
        required=False,
        validators=[VisibleName()],
        help_text="Leave empty to use the document's metadata.name (or the file name for plain manifests).",
    )
    visibility = visibility_field("scenarios")
    cluster = forms.ModelChoiceField(
        queryset=Cluster.objects.none(),
        required=False,
        empty_label="(none)",
        help_text="Nodes (and running pods) to use when the document has none, e.g. for plain Deployment "
        "manifests; with (none) its runs use the cluster picked on the scenario page (three-zones by default).",
    )
    file = forms.FileField(
        required=False,
        help_text="A .yaml, .yml or .json file: a kubeviz Scenario or plain Kubernetes manifests.",
        widget=forms.ClearableFileInput(attrs={"accept": ",".join(DOCUMENT_EXTENSIONS)}),
    )
    text = DocumentTextField(
        required=False,
        label="…or paste the document",
        widget=forms.Textarea(
            attrs={
                "rows": 18,
                "spellcheck": "false",
                "autocomplete": "off",
                "wrap": "off",
                "placeholder": "apiVersion: kubeviz.dev/v1\nkind: Scenario\nmetadata:\n  name: my-scenario\nspec:\n"
                '  nodes:\n    - {name: node-a, allocatable: {cpu: "4", memory: 8Gi}}\n  objects: []\n\n'
                "— or Kubernetes manifests separated by ---",
            }
        ),
    )
    # The file name a corrected document came from, so errors and plain manifests keep naming it.
    source_name = forms.CharField(
        max_length=200, required=False, widget=forms.HiddenInput, validators=[VisibleName("file name")]
    )

    def __init__(self, *args: Any, user: Viewer | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        cluster_field = self.fields["cluster"]
        assert isinstance(cluster_field, forms.ModelChoiceField)  # declared above
        cluster_field.queryset = visible_clusters(user).order_by("name")
        self.text_dropped = False  # the pasted text was too big to send back in the page

    def full_clean(self) -> None:
        super().full_clean()
        if self.text_dropped:
            # The page shows the error, not a copy of the megabytes that caused it.
            self.data = _without_text(self.data)

    def clean_file(self) -> UploadedFile | None:
        upload: UploadedFile | None = self.cleaned_data.get("file")
        if not upload:
            return None
        name = PurePath(upload.name or "").name
        VisibleName("file name")(name)  # it names the document in errors, and plain manifests after it
        if not name.lower().endswith(DOCUMENT_EXTENSIONS):
            raise forms.ValidationError(f"{name!r} is not a .yaml, .yml or .json file.")
        error = size_error(upload.size or 0, settings.KUBEVIZ_MAX_UPLOAD_BYTES)
        if error:
            raise forms.ValidationError(f"The file {error}")
        return upload

    def clean_text(self) -> str:
        text: str = self.cleaned_data.get("text", "")
        error = size_error(len(text.encode("utf-8", "surrogatepass")), settings.KUBEVIZ_MAX_UPLOAD_BYTES)
        if error:
            self.text_dropped = True
            raise forms.ValidationError(f"The pasted text {error}")
        return text

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        upload: UploadedFile | None = cleaned.get("file")
        text: str = cleaned.get("text", "")
        if self.errors.get("file") or self.errors.get("text"):
            return cleaned
        if upload and text.strip():
            raise forms.ValidationError("Give either a file or pasted text, not both.")
        if upload:
            raw = upload.read(settings.KUBEVIZ_MAX_UPLOAD_BYTES + 1)
            try:
                text = raw.decode("utf-8-sig")
            except UnicodeDecodeError as exc:
                self.add_error("file", "The file is not UTF-8: line {}: {}.".format(*not_utf8(raw, exc)))
                return cleaned
            cleaned["document"] = text
            cleaned["source_name"] = PurePath(upload.name or self.pasted_source).name
        elif text.strip():
            cleaned["document"] = text
            source_name = PurePath(cleaned.get("source_name") or self.pasted_source).name
            cleaned["source_name"] = source_name if source_name.endswith(DOCUMENT_EXTENSIONS) else self.pasted_source
        else:
            raise forms.ValidationError("Choose a file or paste a document.")
        return cleaned

    def upload(self) -> Upload:
        """The validated submission (call after ``is_valid()``)."""
        data = self.cleaned_data
        return Upload(
            text=data["document"],
            source_name=data["source_name"],
            name=data.get("name", ""),
            visibility=data["visibility"],
            cluster=data.get("cluster"),
        )


def _without_text(data: Mapping[str, Any]) -> Mapping[str, Any]:
    """The submitted data with the pasted text emptied; a view's QueryDict stays one (its lists intact)."""
    if isinstance(data, QueryDict):
        emptied = data.copy()
        emptied["text"] = ""
        return emptied
    return {**data, "text": ""}


# GPU traces

CSV_EXTENSIONS = (".csv", ".txt")


class GpuTraceUploadForm(forms.Form):
    """A GPU trace's node and pod lists (CSV); the view turns them into a Scenario document."""

    name = forms.SlugField(
        max_length=63,
        initial="gpu-trace",
        validators=[VisibleName()],
        help_text="The scenario's metadata.name: lowercase letters, digits and '-'.",
    )
    visibility = visibility_field("scenarios")
    nodes_csv = forms.FileField(
        label="Nodes (CSV)",
        help_text="sn,cpu_milli,memory_mib,gpu,model — e.g. openb_node_list_gpu_node.csv.",
        widget=forms.ClearableFileInput(attrs={"accept": ",".join(CSV_EXTENSIONS)}),
    )
    pods_csv = forms.FileField(
        label="Pods (CSV)",
        help_text="name,cpu_milli,memory_mib,num_gpu,gpu_milli[,gpu_spec,qos,pod_phase,creation_time,"
        "deletion_time,scheduled_time] — e.g. openb_pod_list_default.csv.",
        widget=forms.ClearableFileInput(attrs={"accept": ",".join(CSV_EXTENSIONS)}),
    )
    protocol = forms.ChoiceField(
        choices=[
            ("tuned", "tuned — shuffled, one every interval, until the target share of GPUs (the paper's)"),
            ("replay", "replay — created and deleted at the trace's own times"),
        ],
        initial=PROTOCOLS[0],
        widget=forms.RadioSelect,
    )
    target_percent = forms.IntegerField(
        label="Target (% of GPU capacity)",
        min_value=1,
        max_value=1000,
        initial=DEFAULT_TARGET_PERCENT,
        help_text="Tuned: pods arrive until their GPU requests reach this share of the cluster's GPUs.",
    )
    arrival_interval = forms.CharField(
        max_length=20,
        initial=f"{DEFAULT_ARRIVAL_INTERVAL_MS}ms",
        help_text='Tuned: time between two arrivals, e.g. "10ms", "1s".',
    )

    def _csv(self, field: str) -> tuple[str, str] | None:
        upload: UploadedFile | None = self.cleaned_data.get(field)
        if not upload:
            return None
        name = PurePath(upload.name or f"{field}.csv").name
        VisibleName("file name")(name)  # problems and the saved message name the file
        if not name.lower().endswith(CSV_EXTENSIONS):
            raise forms.ValidationError(f"{name!r} is not a .csv file.")
        error = size_error(upload.size or 0, settings.KUBEVIZ_MAX_UPLOAD_BYTES)
        if error:
            raise forms.ValidationError(f"The file {error}")
        raw = upload.read(settings.KUBEVIZ_MAX_UPLOAD_BYTES + 1)
        try:
            return name, raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise forms.ValidationError("The file is not UTF-8: line {}: {}.".format(*not_utf8(raw, exc))) from None

    def clean_nodes_csv(self) -> tuple[str, str] | None:
        return self._csv("nodes_csv")

    def clean_pods_csv(self) -> tuple[str, str] | None:
        return self._csv("pods_csv")

    def clean_arrival_interval(self) -> str:
        text: str = self.cleaned_data.get("arrival_interval", "").strip()
        try:
            ms = parse_duration_ms(text)
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from None
        if ms < 1:
            raise forms.ValidationError("Must be at least 1ms.")
        return text


# Clusters

CLUSTER_PLACEHOLDER = (
    "kubectl get nodes -o yaml > cluster.yaml\n"
    "echo --- >> cluster.yaml\n"
    "kubectl get pods -A -o yaml >> cluster.yaml   # optional: the pods already running\n\n"
    "— then upload cluster.yaml, or paste it here"
)


class ClusterUploadForm(ScenarioUploadForm):
    """kubectl output (nodes, optionally pods), a Scenario document or Node manifests; the file
    and text checks are the scenario upload's."""

    pasted_source = "cluster.yaml"

    def __init__(self, *args: Any, user: Viewer | None = None, **kwargs: Any) -> None:
        super().__init__(*args, user=user, **kwargs)
        del self.fields["cluster"]
        self.fields["name"].help_text = "Leave empty to use the file name (or the Scenario's metadata.name)."
        self.fields["visibility"].help_text = "Public clusters are listed for everyone; private ones only for you."
        self.fields["file"].help_text = (
            "A .yaml, .yml or .json file: `kubectl get nodes -o yaml`, optionally followed by `---` and "
            "`kubectl get pods -A -o yaml`."
        )
        self.fields["text"].widget.attrs["placeholder"] = CLUSTER_PLACEHOLDER


class ClusterShapeForm(forms.Form):
    """N alike nodes spread over some zones (scheduler_core.documents.shape_document)."""

    name = forms.CharField(max_length=100, initial="my-cluster", validators=[VisibleName()])
    count = forms.IntegerField(label="Nodes", min_value=1, max_value=MAX_NODES, initial=10)
    cpu = forms.CharField(label="CPU per node", max_length=20, initial="8", help_text='A quantity: "8", "3500m".')
    memory = forms.CharField(
        label="Memory per node", max_length=20, initial="32Gi", help_text='A quantity: "32Gi", "16G".'
    )
    pods = forms.IntegerField(label="Pods per node", min_value=1, max_value=10_000, initial=110)
    zones = forms.IntegerField(
        min_value=1, max_value=26, initial=3, help_text="Nodes go round-robin into zone-a, zone-b, …"
    )
    name_prefix = forms.CharField(
        label="Node name prefix", max_length=40, initial="node-", help_text="node- gives node-0, node-1, …"
    )
    visibility = forms.ChoiceField(choices=Visibility.choices, initial=Visibility.PUBLIC, widget=forms.RadioSelect)


class SaveNodesForm(forms.Form):
    """The "save its nodes as a cluster" button: a name (default "<scenario> nodes") and who sees it."""

    name = forms.CharField(max_length=100, required=False, validators=[VisibleName()])
    visibility = forms.ChoiceField(choices=Visibility.choices, required=False)


# Accounts


class VisibleUsernameField(UsernameField):
    """A username shows in every list of what its owner made: no bidi controls or invisible
    characters (names.VisibleName), checked before Django's own letters-and-digits rule so the
    message says which character is wrong."""

    def run_validators(self, value: Any) -> None:
        if value not in self.empty_values:
            VisibleName("username")(value)
        super().run_validators(value)


class SignupForm(UserCreationForm):  # type: ignore[type-arg]  # generic only in django-stubs
    """Django's sign-up form, with the username checked by :class:`VisibleUsernameField`."""

    class Meta(UserCreationForm.Meta):  # type: ignore[misc,name-defined]  # untyped base (see above)
        field_classes = {"username": VisibleUsernameField}
