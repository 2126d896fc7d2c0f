"""Job controller (job_controller.go manageJob): parallelism pods until completions succeeded."""

from __future__ import annotations

import re

import pytest

from scheduler_core.api.workloads import Job
from tests.core.cluster.controllers.fake_api import FakeAPI, template


def make_job(api: FakeAPI, **kwargs: object) -> Job:
    job = Job(name="batch", template=template(labels={}), **kwargs)  # type: ignore[arg-type]
    api.manager.add(job)
    api.sync()
    return job


def complete_one(api: FakeAPI) -> None:
    api.run_all()
    api.sync()
    pod = next(p for p in api.pods.values() if p.phase == "Running")
    api.complete(pod)
    api.sync()


@pytest.mark.parametrize(
    ("parallelism", "completions", "active_after_each_completion"),
    [
        (2, 5, [2, 2, 2, 1, 0]),
        (3, 2, [1, 0]),
        (1, 1, [0]),
    ],
    ids=[
        "keeps parallelism pods until the remaining completions are fewer",
        "never runs more pods than completions are left",
        "a single-pod Job",
    ],
)
def test_parallelism_and_completions(
    parallelism: int, completions: int, active_after_each_completion: list[int]
) -> None:
    api = FakeAPI()
    make_job(api, parallelism=parallelism, completions=completions)
    assert len(api.names()) == min(parallelism, completions)
    seen = []
    for _ in active_after_each_completion:
        complete_one(api)
        seen.append(len(api.names()))
    assert seen == active_after_each_completion
    assert len(api.of_type("rollout_completed")) == 1


def test_job_pods_are_named_and_labelled_after_the_job() -> None:
    api = FakeAPI()
    make_job(api, parallelism=2, completions=2)
    for pod in api.pods.values():
        assert re.match(r"^batch-[bcdfghjklmnpqrstvwxz2456789]{5}$", pod.name)
        assert pod.labels == {"batch.kubernetes.io/job-name": "batch", "job-name": "batch"}


def test_completion_is_reported_as_rollout_completed_with_the_run_time() -> None:
    api = FakeAPI()
    api.now_ms = 500
    make_job(api, parallelism=1, completions=1)
    api.now_ms = 4_500
    complete_one(api)
    assert api.of_type("rollout_completed") == [
        {
            "t_ms": 4_500,
            "type": "rollout_completed",
            "workload": "job/default/batch",
            "revision": 1,
            "duration_ms": 4_000,
        }
    ]
    assert api.manager.status("job/batch")["updated"] == 1


def test_without_completions_the_first_success_ends_the_job_once_the_others_finish() -> None:
    api = FakeAPI()
    make_job(api, parallelism=2, completions=None)
    complete_one(api)
    assert len(api.names()) == 1
    assert not api.of_type("rollout_completed")
    complete_one(api)
    assert len(api.of_type("rollout_completed")) == 1


def test_failures_past_the_backoff_limit_fail_the_job() -> None:
    api = FakeAPI()
    make_job(api, parallelism=1, completions=3, backoff_limit=1)
    for _ in range(2):
        pod = next(iter(api.pods.values()))
        pod.phase = "Failed"
        del api.pods[pod.key]
        api.manager.on_pod_event(pod)
        api.sync()
    assert api.names() == []
    assert not api.of_type("rollout_completed")
