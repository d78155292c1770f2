"""The agents' networks: the contract, MLP/GRU and CNN+GRU models, encoders, policy heads."""
