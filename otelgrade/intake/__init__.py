"""Intake: OTLP export requests in (gRPC and HTTP receivers), spans and log events out, grouped per trace.

It decodes requests, keeps them in the spool when durability is on, pushes back when memory is full, splits them
among grading workers by trace, and holds each trace until it is complete (`assemble`).
"""
