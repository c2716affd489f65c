"""gRPC transport: the only package that imports grpc."""
