"""The benchmark harness: LoadGen system-under-test glue and the engines behind one protocol.

It knows LoadGen and the engine protocol, never a specific engine; vLLM is an optional extra.
"""
