"""Structured tasks: listops, prefix_sums, shortest_path, graph_connectivity."""
