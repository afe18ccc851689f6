"""The domain registry: which domains are bundled, and what a user's list of names means."""

from __future__ import annotations

import pytest

from domains import registry
from domains.registry import UnknownDomain
from tests.support.domain_copies import domains_root


@pytest.fixture
def root(tmp_path, monkeypatch):
    domains_root(tmp_path, ["pet_care", "job_seeking"], tasks=1)
    (tmp_path / "half_built").mkdir()  # a spec but no tools: not a bundled domain
    (tmp_path / "half_built" / "spec.json").write_text("{}")
    (tmp_path / "notes").mkdir()
    monkeypatch.setenv(registry.ROOT_ENV, str(tmp_path))
    return tmp_path


def test_bundled_domains_are_the_folders_with_a_spec_and_tools(root):
    assert registry.bundled() == ["job_seeking", "pet_care"]
    assert registry.expand("all") == ["job_seeking", "pet_care"]
    assert registry.resolve("pet_care") == root / "pet_care"


def test_a_list_mixes_sets_names_and_commas_each_name_once():
    assert registry.expand("set_b") == ["express_logistics", "job_seeking", "email_management", "pet_care"]
    assert registry.expand("pet_care, set_a") == ["pet_care", "wedding_planning", "knowledge_management",
                                                  "job_seeking", "healthcare_telemedicine"]
    assert registry.expand(["job_seeking,pet_care", "job_seeking"]) == ["job_seeking", "pet_care"]


@pytest.mark.parametrize("names", ["", " , ", "../etc", "Job-Seeking"])
def test_a_bad_list_is_refused_naming_what_there_is(root, names):
    with pytest.raises(UnknownDomain, match="bundled: job_seeking, pet_care"):
        registry.expand(names)


def test_an_unknown_domain_is_refused_naming_the_bundled_ones(root):
    with pytest.raises(FileNotFoundError, match="bundled: job_seeking, pet_care"):
        registry.resolve("wedding_planning")
    with pytest.raises(UnknownDomain, match="no domain 'wedding_planning'"):
        registry.require_bundled(registry.expand("pet_care,wedding_planning"))


def test_holding_set_b_out_of_set_a_moves_job_seeking_to_test_and_says_so():
    split = registry.split("set_a", "set_b")
    assert split.train == ["wedding_planning", "knowledge_management", "healthcare_telemedicine"]
    assert split.test == ["express_logistics", "job_seeking", "email_management", "pet_care"]
    assert len(split.notes) == 1 and "job_seeking" in split.notes[0] and "set_a" in split.notes[0]


def test_holding_out_a_named_domain_needs_no_note_and_train_must_keep_one():
    split = registry.split("job_seeking,pet_care", "pet_care")
    assert (split.train, split.test, split.notes) == (["job_seeking"], ["pet_care"], [])
    with pytest.raises(UnknownDomain, match="no domain to train on"):
        registry.split("pet_care", "pet_care")
