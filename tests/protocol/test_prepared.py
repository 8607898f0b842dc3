"""ColumnSpec, Prepared and decode_prepared (PREPARED bodies for v3, v4, v5)."""

from __future__ import annotations

import pickle

import oracle
import pytest
from hotwire import GLOBAL_TABLES_SPEC, NO_METADATA, Col, i32, prepared_body, short, u32

import cqlcodec
from cqlcodec import ColumnSpec, DecodeError, Prepared, decode_prepared, decode_result, parse_type

INT = parse_type("int")
TEXT = parse_type("text")
LIST = parse_type("list<map<text, int>>")  # frozen<> is not on the wire
VEC = parse_type("vector<float, 4>")
UDT = cqlcodec.user_type("ks", "addr", [("street", TEXT), ("zip", INT)])

BINDS: list[Col] = [("ks", "t", "a", INT), ("ks", "t", "b", TEXT), ("ks", "t", "c", LIST),
                    ("ks", "t", "v", VEC), ("ks", "t", "u", UDT)]
RESULTS: list[Col] = [("ks", "t", "x", TEXT), ("ks", "t", "y", INT)]


def specs(cols: list[Col]) -> tuple[ColumnSpec, ...]:
    return tuple(ColumnSpec(*c) for c in cols)


# --- ColumnSpec --------------------------------------------------------------------------------

def test_column_spec_is_an_immutable_value() -> None:
    a = ColumnSpec("ks", "t", "c", INT)
    b = ColumnSpec("ks", "t", "c", parse_type("int"))
    assert a == b and hash(a) == hash(b)
    assert a != ColumnSpec("ks", "t", "c", TEXT)
    assert a != ColumnSpec("ks", "t2", "c", INT)
    assert (a.keyspace, a.table, a.name, a.type) == ("ks", "t", "c", INT)
    ks, table, name, t = a
    assert (ks, table, name, t) == tuple(a)
    assert a.key == ("ks", "t", "c")
    with pytest.raises(AttributeError):
        a.name = "d"  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(a)) == a
    assert "int" in repr(a)


# --- Prepared built directly ----------------------------------------------------------------------

def test_prepared_attributes() -> None:
    p = Prepared(specs(BINDS), specs(RESULTS), [1, 0], 5, b"qid", b"rid", None, 0x80000000)
    assert p.bind_columns == specs(BINDS) and p.result_columns == specs(RESULTS)
    assert p.pk_indexes == (1, 0) and p.protocol_version == 5
    assert p.query_id == b"qid" and p.result_metadata_id == b"rid"
    assert p.column_encryption_policy is None and p.metadata_flags == 0x80000000
    assert p.bind_names == ("a", "b", "c", "v", "u") and p.result_names == ("x", "y")
    assert p.kind == 4
    assert "query_id='716964'" in repr(p)
    k = Prepared(bind_columns=list(specs(BINDS)), result_columns=(), pk_indexes=(),
                 protocol_version=3, query_id=b"", result_metadata_id=None,
                 column_encryption_policy=None)
    assert k.bind_columns == specs(BINDS) and k.result_columns == ()


def test_prepared_validation() -> None:
    with pytest.raises(cqlcodec.ProtocolVersionError):
        Prepared([], protocol_version=2)
    with pytest.raises(ValueError, match="out of range"):
        Prepared(specs(BINDS[:2]), pk_indexes=[2])
    with pytest.raises(ValueError, match="twice"):
        Prepared(specs(BINDS[:2]), pk_indexes=[1, 1])
    with pytest.raises(TypeError):
        Prepared([("ks", "t", "a", INT)])  # type: ignore[list-item]
    with pytest.raises(TypeError):
        Prepared([ColumnSpec("ks", "t", "a", "int")])  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Prepared([], query_id="abc")  # type: ignore[arg-type]


def test_with_result_metadata() -> None:
    p = Prepared(specs(BINDS), specs(RESULTS), [0], 5, b"q", b"r1")
    q = p.with_result_metadata(specs(RESULTS[:1]), b"r2")
    assert q.result_columns == specs(RESULTS[:1]) and q.result_metadata_id == b"r2"
    assert q.bind_columns == p.bind_columns and q.pk_indexes == p.pk_indexes
    assert p.result_metadata_id == b"r1"


# --- decode_prepared --------------------------------------------------------------------------------

@pytest.mark.parametrize("pv", [3, 4, 5])
@pytest.mark.parametrize("bind_flags", [0, GLOBAL_TABLES_SPEC])
@pytest.mark.parametrize("results", [[], RESULTS])
def test_decode_prepared(pv: int, bind_flags: int, results: list[Col]) -> None:
    pk = [1, 0] if pv >= 4 else []
    body = prepared_body(b"\x01" * 16, BINDS, pk, results, pv, bind_flags=bind_flags,
                         result_metadata_id=b"\x05" * 16)
    p = decode_prepared(body[4:], pv)
    assert p.query_id == b"\x01" * 16
    assert p.result_metadata_id == (b"\x05" * 16 if pv >= 5 else None)
    assert p.bind_columns == specs(BINDS)
    assert p.result_columns == specs(results)
    assert p.pk_indexes == tuple(pk)
    assert p.protocol_version == pv and p.metadata_flags == bind_flags
    same = decode_result(body, pv)
    assert isinstance(same, Prepared)
    assert (same.bind_columns, same.result_columns, same.pk_indexes, same.query_id) == (
        p.bind_columns, p.result_columns, p.pk_indexes, p.query_id)
    msg = oracle.driver_result(body, pv)
    assert msg.query_id == p.query_id
    assert [c.name for c in msg.bind_metadata] == list(p.bind_names)
    assert [c[2] for c in (msg.column_metadata or [])] == list(p.result_names)
    assert (msg.pk_indexes or []) == list(p.pk_indexes)
    for driver_col, ours in zip(msg.bind_metadata, p.bind_columns):
        assert (driver_col.keyspace_name, driver_col.table_name) == (ours.keyspace, ours.table)


def test_scylla_metadata_id_on_v4() -> None:
    body = prepared_body(b"q", BINDS[:1], [0], [], 4, metadata_id=True,
                         result_metadata_id=b"mid")
    p = decode_prepared(body[4:], 4, metadata_id=True)
    assert p.result_metadata_id == b"mid" and p.bind_names == ("a",)
    with pytest.raises(DecodeError):
        decode_prepared(body[4:], 4)
    r = decode_result(body, 4, metadata_id=True)
    assert isinstance(r, Prepared) and r.result_metadata_id == b"mid"


def test_lwt_bit_is_kept() -> None:
    body = prepared_body(b"q", BINDS[:1], [0], [], 4, bind_flags=0x80000000)
    assert decode_prepared(body[4:], 4).metadata_flags == 0x80000000


@pytest.mark.parametrize("pv", [3, 4, 5])
def test_every_truncation_is_a_decode_error(pv: int) -> None:
    body = prepared_body(b"\x01" * 16, BINDS, [0] if pv >= 4 else [], RESULTS, pv)[4:]
    decode_prepared(body, pv)
    for cut in range(len(body)):
        with pytest.raises(DecodeError):
            decode_prepared(body[:cut], pv)
    with pytest.raises(DecodeError, match="trailing"):
        decode_prepared(body + b"\x00", pv)


def test_pk_index_out_of_range() -> None:
    body = prepared_body(b"q", BINDS[:2], [2], [], 4)[4:]
    with pytest.raises(DecodeError, match="out of range"):
        decode_prepared(body, 4)


def test_pk_index_twice() -> None:
    body = prepared_body(b"q", BINDS[:2], [1, 1], [], 4)[4:]
    with pytest.raises(DecodeError, match="twice"):
        decode_prepared(body, 4)


@pytest.mark.parametrize("count", [-1, 100, 2**31 - 1])
def test_impossible_counts(count: int) -> None:
    head = short(1) + b"q"
    with pytest.raises(DecodeError):
        decode_prepared(head + u32(0) + i32(count) + i32(0), 4)
    with pytest.raises(DecodeError):
        decode_prepared(head + u32(0) + i32(0) + i32(count), 4)


def test_result_metadata_with_no_metadata_flag() -> None:
    body = prepared_body(b"q", BINDS[:1], [0], RESULTS, 4, result_flags=NO_METADATA)
    p = decode_prepared(body[4:], 4)
    assert p.result_columns == ()


def test_decode_prepared_takes_bytes_like() -> None:
    body = prepared_body(b"q", BINDS[:1], [0], [], 4)[4:]
    assert decode_prepared(bytearray(body), 4).bind_names == ("a",)
    assert decode_prepared(memoryview(body), 4).bind_names == ("a",)
