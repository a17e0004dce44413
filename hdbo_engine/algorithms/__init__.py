"""One module per algorithm: ``msucb``, ``cobbo``, ``goucb`` (needs torch), ``bkb``, ``baselines``.

Look an algorithm up by name with :func:`hdbo_engine.get_algorithm`, or
import its class from the package top: ``from hdbo_engine import CobBO``.
"""
