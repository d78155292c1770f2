"""Tests for AttrDict."""

import copy
import pickle

import pytest
import yaml

from agents.tools.attr_dict import AttrDict


def test_construct_from_dict_and_kwargs():
    config = AttrDict({"a": 1}, b=2)
    assert config.a == 1 and config["b"] == 2
    assert "a" in config and "c" not in config


def test_missing_key_reads_as_none():
    assert AttrDict().missing is None


def test_magic_attribute_raises():
    with pytest.raises(AttributeError):
        AttrDict().__getstate_x__  # noqa: B018


def test_locked_on_creation():
    config = AttrDict(a=1)
    with pytest.raises(RuntimeError, match="with obj.unlocked"):
        config.a = 2
    with pytest.raises(RuntimeError, match="with obj.unlocked"):
        config["b"] = 3
    with pytest.raises(RuntimeError):
        config.update(c=4)
    assert config == {"a": 1}


@pytest.mark.parametrize(
    "write, action",
    [
        (lambda d: d.pop("a"), "delete key 'a'"),
        (lambda d: d.pop("missing", None), "delete key 'missing'"),
        (lambda d: d.setdefault("b", 2), "set key 'b'"),
        (lambda d: d.popitem(), "pop an item"),
        (lambda d: d.clear(), "clear"),
        (lambda d: d.update(b=2), "update"),
        (lambda d: d.update([("b", 2)]), "update"),
        (lambda d: d.__ior__({"b": 2}), "update"),  # What `d |= {...}` calls.
        (lambda d: d.__delitem__("a"), "delete key 'a'"),
        (lambda d: delattr(d, "a"), "delete key 'a'"),
        (lambda d: delattr(d, "_locked"), "delete key '_locked'"),
    ],
)
def test_every_mutating_method_respects_the_lock(write, action):
    config = AttrDict(a=1, nested={"x": 1})
    with pytest.raises(RuntimeError, match=f"Cannot {action}: .*with obj.unlocked"):
        write(config)
    assert config == {"a": 1, "nested": {"x": 1}}
    with pytest.raises(RuntimeError):  # Still locked, also after `del config._locked`.
        config.a = 2


def test_in_place_or_respects_the_lock():
    config = AttrDict(a=1)
    with pytest.raises(RuntimeError, match="Cannot update"):
        config |= {"b": 2}
    with config.unlocked:
        config |= {"b": 2}
    assert config == {"a": 1, "b": 2} and isinstance(config, AttrDict)


def test_unlocked_allows_every_mutating_method():
    config = AttrDict(a=1, b=2, c=3, d=4)
    with config.unlocked:
        assert config.pop("a") == 1 and config.pop("missing", 0) == 0
        assert config.setdefault("e", 5) == 5
        config.update(iter([("f", 6)]))  # An iterator is consumed once, by the update.
        del config.b
        del config["c"]
        assert config.popitem() == ("f", 6)
    assert config == {"d": 4, "e": 5}
    with config.unlocked:
        config.clear()
    assert config == {}


def test_unlocked_allows_writes_and_relocks():
    config = AttrDict(a=1)
    with config.unlocked:
        config.a = 2
        config.b = 3
    assert config == {"a": 2, "b": 3}
    with pytest.raises(RuntimeError):
        config.c = 4


def test_relocks_after_exception():
    config = AttrDict()
    with pytest.raises(KeyError), config.unlocked:
        raise KeyError("x")
    with pytest.raises(RuntimeError):
        config.a = 1


def test_copy_keeps_type_and_is_independent():
    config = AttrDict(a=1)
    copy = config.copy()
    assert isinstance(copy, AttrDict)
    with copy.unlocked:
        copy.a = 5
    assert config.a == 1 and copy.a == 5


@pytest.mark.parametrize(
    "duplicate",
    [copy.copy, copy.deepcopy, lambda d: pickle.loads(pickle.dumps(d))],
    ids=["copy", "deepcopy", "pickle"],
)
def test_copy_module_and_pickle_keep_type_items_and_lock(duplicate):
    config = AttrDict(a=1, nested=AttrDict(x=[1]))
    result = duplicate(config)
    assert result == config and type(result) is AttrDict and type(result.nested) is AttrDict
    with pytest.raises(RuntimeError):
        result.a = 2


def test_yaml_round_trip_with_safe_loader():
    config = AttrDict(rate=3e-4, layers=[64, 64], name="pendulum", nested=AttrDict(x=True))
    text = yaml.safe_dump(config.to_dict())
    restored = AttrDict(yaml.safe_load(text))
    assert restored == config
