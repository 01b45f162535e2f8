"""tiktoken's GPT-2 encoding, from this machine only (the grader never downloads)."""
import socket


def gpt2_offline():
    """tiktoken's GPT-2 encoding, from this machine only: every connection is refused while it
    loads (the grader never downloads). Raises where tiktoken or the encoding is missing."""
    import tiktoken

    def refuse(*args, **kwargs) -> None:
        raise OSError("the grader never downloads")

    saved = socket.socket.connect, socket.getaddrinfo, socket.create_connection
    socket.socket.connect = socket.getaddrinfo = socket.create_connection = refuse
    try:
        from .tiktoken_offline import install
        install()
        return tiktoken.get_encoding("gpt2")
    finally:
        socket.socket.connect, socket.getaddrinfo, socket.create_connection = saved
