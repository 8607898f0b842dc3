"""Hostile-input fuzzing of cqlcodec.

``model`` is an independent reference of the wire format (generators of valid
bytes with their expected values, and a reference decoder that says whether any
input must be accepted, must be rejected, or may go either way); ``bodies`` does
the same for RESULT and PREPARED bodies; ``mutate`` breaks valid inputs;
``engine`` runs cases against cqlcodec and judges them; ``runner`` is the child
process entry point; ``test_fuzz`` starts it from pytest.
"""
