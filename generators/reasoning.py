"""Reasoning-chain tasks with a hops knob: variable_binding, pointer_chasing."""
