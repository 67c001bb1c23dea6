/// TidingsNet: HTTP, WebSocket (RFC 6455) and Engine.IO 4 / Socket.IO 5 clients.
public enum TidingsNet {}
