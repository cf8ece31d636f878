"""The coach: proposes faster kernels and screens the candidates it writes."""
