"""rows_metadata_extent: where a rows <metadata> and its column specs end, found without
building types, agrees with read_rows_metadata on every input (and refuses what it refuses)."""

from __future__ import annotations

import pytest
from hotwire import GLOBAL_TABLES_SPEC, NO_METADATA, Col, rows_metadata
from hypothesis import given
from hypothesis import strategies as st
from type_strategies import type_trees

from cqlcodec import CqlType, DecodeError, kinds
from cqlcodec.protocol.metadata import read_rows_metadata, rows_metadata_extent


def _has_udt(t: CqlType) -> bool:
    """Whether ``t``'s [option] holds a UDT option (0x0030); vectors, reversed and custom
    types travel as a Java class name instead."""
    if t.kind in (kinds.VECTOR, kinds.REVERSED, kinds.CUSTOM):
        return False
    return t.kind == kinds.UDT or any(_has_udt(s) for s in t.subtypes)


@given(st.lists(type_trees(max_leaves=4), min_size=1, max_size=4), st.booleans(), st.booleans(),
       st.sampled_from([None, b"", b"state"]), st.sampled_from([None, b"\x07" * 16]),
       st.sampled_from([None, 3]))
def test_the_extent_agrees_with_the_parse(types: list[CqlType], global_spec: bool,
                                          no_metadata: bool, paging: bytes | None,
                                          new_id: bytes | None, page: int | None) -> None:
    if no_metadata:
        new_id = None  # the protocol forbids both
    cols: list[Col] = [("ks", "t" if global_spec else f"t{i}", f"c{i}", t)
                       for i, t in enumerate(types)]
    flags = (GLOBAL_TABLES_SPEC if global_spec else 0) | (NO_METADATA if no_metadata else 0)
    body = b"\xff\xff" + rows_metadata(cols, flags=flags, paging_state=paging,
                                       new_metadata_id=new_id, continuous_page=page) + b"rows"
    parsed = read_rows_metadata(body, 2, len(body), "metadata")
    extent = rows_metadata_extent(body, 2, len(body))
    assert extent.specs_end == parsed.end == len(body) - 4
    assert (extent.flags, extent.column_count, extent.paging_state, extent.new_metadata_id,
            extent.continuous_page) == (parsed.flags, parsed.column_count, parsed.paging_state,
                                        parsed.new_metadata_id, parsed.continuous_page)
    assert extent.user_types == (not no_metadata and any(_has_udt(t) for t in types))
    if no_metadata:
        assert extent.specs_start == extent.specs_end
    # the key covers the specs: other names, another key
    other = rows_metadata([(k, t, n + "x", ty) for k, t, n, ty in cols], flags=flags,
                          paging_state=paging, new_metadata_id=new_id, continuous_page=page)
    if cols and not no_metadata:
        assert rows_metadata_extent(other, 0, len(other)).specs_key(other) != extent.specs_key(
            body)
    # every truncation: both refuse, or both read the same
    for cut in sorted(set(range(2, len(body) - 4, max(1, len(body) // 40)))
                      | set(range(max(2, len(body) - 24), len(body) - 4))):
        try:
            expected_end = read_rows_metadata(body, 2, cut, "metadata").end
        except DecodeError:
            with pytest.raises(DecodeError):
                rows_metadata_extent(body, 2, cut)
            continue
        assert rows_metadata_extent(body, 2, cut).specs_end == expected_end


@pytest.mark.parametrize("option", [b"\x00\x7f", b"\x00\x31\x00\x00", b"\x00\x20\x00\x40"])
def test_bad_type_ids_are_refused(option: bytes) -> None:
    body = b"\x00\x00\x00\x01" + b"\x00\x00\x00\x01" + b"\x00\x01k\x00\x01t\x00\x01c" + option
    with pytest.raises(DecodeError):
        read_rows_metadata(body, 0, len(body), "metadata")
    with pytest.raises(DecodeError):
        rows_metadata_extent(body, 0, len(body))


def test_deep_nesting_is_refused_as_by_the_parse() -> None:
    option = b"\x00\x20" * 200 + b"\x00\x09"
    body = b"\x00\x00\x00\x01" + b"\x00\x00\x00\x01" + b"\x00\x01k\x00\x01t\x00\x01c" + option
    with pytest.raises(DecodeError) as parsed:
        read_rows_metadata(body, 0, len(body), "metadata")
    with pytest.raises(type(parsed.value)):
        rows_metadata_extent(body, 0, len(body))
