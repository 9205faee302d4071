//! A tokio-shaped network over sim-core's: `UdpSocket`, `TcpListener` and `TcpStream` with
//! tokio's method signatures (`TcpStream` implements `tokio::io::AsyncRead`/`AsyncWrite`),
//! backed by sim-core datagrams and streams with all their faults (latency, loss,
//! duplication, partitions, clogs, stalls, resets, refused or black-holed connects,
//! crashes), and name resolution by node name.
//!
//! Addresses: node `n` (in the order nodes were added) is the IPv4 address `10.0.x.y` with
//! `x.y` = `n + 1`; [`lookup`] turns a node name into it, and every target accepts a name
//! (`"server:7"`, `("server", 7)`) as well as a `SocketAddr`. The IP a socket binds is
//! ignored: a socket always binds on its own node.
//!
//! A send stops the node's runtime (see [`crate::runtime`]), so the world moves before the
//! node does anything else: causality holds at any latency, zero included.

use std::future::Future;
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use sim_core::net::{Addr, Socket};
use sim_core::node::NodeId;

use crate::runtime::{node_waker, note_visible};

/// The address of node `id`: `10.0.x.y`, `x.y` = `id + 1`.
pub fn ip_of(id: NodeId) -> IpAddr {
    let n = id.0 + 1;
    IpAddr::V4(Ipv4Addr::new(10, (n >> 16) as u8, (n >> 8) as u8, n as u8))
}

fn node_of_ip(ip: IpAddr) -> Option<NodeId> {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, c, d] = v4.octets();
            let n = (u32::from(b) << 16) | (u32::from(c) << 8) | u32::from(d);
            (a == 10 && n > 0).then(|| NodeId(n - 1))
        }
        IpAddr::V6(_) => None,
    }
}

/// The address of the node called `name`: tokio's `lookup_host` for the simulation.
///
/// # Panics
/// If no node has that name. Must be called from within a simulation.
pub fn lookup(name: &str) -> IpAddr {
    let id = sim_core::node::lookup(name)
        .unwrap_or_else(|| panic!("no node named {name:?}; names are those given to Sim"));
    ip_of(id)
}

/// Anything that names a socket address: a `SocketAddr`, `(IpAddr, port)`, `(name, port)`
/// or `"name:port"`.
pub trait ToSimAddr {
    /// The sim-core address, or an error naming what could not be resolved.
    fn to_sim_addr(&self) -> io::Result<Addr>;
}

fn unknown(what: impl std::fmt::Display) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        format!("{what} names no node of this simulation; use a node name or lookup(name)"),
    )
}

impl ToSimAddr for SocketAddr {
    fn to_sim_addr(&self) -> io::Result<Addr> {
        let node = node_of_ip(self.ip()).ok_or_else(|| unknown(self))?;
        Ok(Addr {
            node,
            port: self.port(),
        })
    }
}

impl ToSimAddr for (IpAddr, u16) {
    fn to_sim_addr(&self) -> io::Result<Addr> {
        SocketAddr::from(*self).to_sim_addr()
    }
}

impl ToSimAddr for (&str, u16) {
    fn to_sim_addr(&self) -> io::Result<Addr> {
        let node = sim_core::node::lookup(self.0).ok_or_else(|| unknown(self.0))?;
        Ok(Addr { node, port: self.1 })
    }
}

impl ToSimAddr for str {
    fn to_sim_addr(&self) -> io::Result<Addr> {
        if let Ok(sa) = self.parse::<SocketAddr>() {
            return sa.to_sim_addr();
        }
        let (name, port) = self.rsplit_once(':').ok_or_else(|| unknown(self))?;
        let port = port.parse::<u16>().map_err(|_| unknown(self))?;
        (name, port).to_sim_addr()
    }
}

impl ToSimAddr for &str {
    fn to_sim_addr(&self) -> io::Result<Addr> {
        (**self).to_sim_addr()
    }
}

impl ToSimAddr for String {
    fn to_sim_addr(&self) -> io::Result<Addr> {
        self.as_str().to_sim_addr()
    }
}

impl ToSimAddr for Addr {
    fn to_sim_addr(&self) -> io::Result<Addr> {
        Ok(*self)
    }
}

fn socket_addr(addr: Addr) -> SocketAddr {
    SocketAddr::new(ip_of(addr.node), addr.port)
}

/// Wakes both the tokio task and the node's sim task (see `runtime::node_waker`).
struct Both(Waker, Waker);

impl Wake for Both {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.wake_by_ref();
        self.1.wake_by_ref();
    }
}

/// Polls with a context whose waker also wakes the node's sim task when a fenced runtime
/// needs that (see `runtime::node_waker`), and with `cx` itself otherwise.
fn with_both<R>(cx: &mut Context<'_>, poll: impl FnOnce(&mut Context<'_>) -> R) -> R {
    match node_waker() {
        Some(node) => {
            let waker = Waker::from(Arc::new(Both(cx.waker().clone(), node)));
            poll(&mut Context::from_waker(&waker))
        }
        None => poll(cx),
    }
}

/// A UDP socket with tokio's signatures, over sim-core datagrams.
///
/// ```
/// use sim_core::sim::{Config, Sim};
/// use sim_tokio::net::UdpSocket;
/// use sim_tokio::TokioSim;
///
/// let mut sim = Sim::new(Config::default());
/// sim.tokio_node("echo", |_| async {
///     let sock = UdpSocket::bind("0.0.0.0:7").await.unwrap();
///     let mut buf = [0u8; 64];
///     loop {
///         let (n, from) = sock.recv_from(&mut buf).await.unwrap();
///         sock.send_to(&buf[..n], from).await.unwrap();
///     }
/// });
/// sim.tokio_client("client", |_| async {
///     let sock = UdpSocket::bind("0.0.0.0:7").await.unwrap();
///     sock.send_to(b"hi", "echo:7").await.unwrap();
///     let mut buf = [0u8; 64];
///     let (n, _) = sock.recv_from(&mut buf).await.unwrap();
///     assert_eq!(&buf[..n], b"hi");
/// });
/// assert!(sim.run_seed(3).outcome.class.is_pass());
/// ```
pub struct UdpSocket {
    inner: Socket<Vec<u8>>,
}

impl std::fmt::Debug for UdpSocket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "UdpSocket({:?})", self.inner.local_addr())
    }
}

impl UdpSocket {
    /// Binds the port of `addr` on this node (the IP part is ignored).
    pub async fn bind(addr: impl ToBindAddr) -> io::Result<UdpSocket> {
        let port = addr.port()?;
        Socket::bind(port)
            .map(|inner| UdpSocket { inner })
            .map_err(|e| io::Error::new(io::ErrorKind::AddrInUse, e.to_string()))
    }

    /// This socket's address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        Ok(socket_addr(self.inner.local_addr()))
    }

    /// Sends `buf` to `target`; returns its length (a datagram is sent whole or lost).
    pub async fn send_to(&self, buf: &[u8], target: impl ToSimAddr) -> io::Result<usize> {
        let to = target.to_sim_addr()?;
        self.inner.send(to, buf.to_vec());
        note_visible();
        Ok(buf.len())
    }

    /// Receives one datagram into `buf` (truncated if longer) and says who sent it.
    pub async fn recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        let (from, data) = RecvFrom { socket: self }.await;
        let n = data.len().min(buf.len());
        buf[..n].copy_from_slice(&data[..n]);
        Ok((n, socket_addr(from)))
    }

    /// Receives one datagram if one is queued.
    pub fn try_recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        match self.inner.try_recv() {
            Some((from, data)) => {
                let n = data.len().min(buf.len());
                buf[..n].copy_from_slice(&data[..n]);
                Ok((n, socket_addr(from)))
            }
            None => Err(io::ErrorKind::WouldBlock.into()),
        }
    }
}

struct RecvFrom<'a> {
    socket: &'a UdpSocket,
}

impl Future for RecvFrom<'_> {
    type Output = (Addr, Vec<u8>);
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut recv = std::pin::pin!(self.socket.inner.recv());
        with_both(cx, |cx| recv.as_mut().poll(cx))
    }
}

/// What `bind` accepts: anything with a port (`"0.0.0.0:7"`, a `SocketAddr`, a port).
pub trait ToBindAddr {
    /// The port to bind.
    fn port(&self) -> io::Result<u16>;
}

impl ToBindAddr for u16 {
    fn port(&self) -> io::Result<u16> {
        Ok(*self)
    }
}

impl ToBindAddr for SocketAddr {
    fn port(&self) -> io::Result<u16> {
        Ok(SocketAddr::port(self))
    }
}

impl ToBindAddr for (Ipv4Addr, u16) {
    fn port(&self) -> io::Result<u16> {
        Ok(self.1)
    }
}

impl ToBindAddr for (IpAddr, u16) {
    fn port(&self) -> io::Result<u16> {
        Ok(self.1)
    }
}

impl ToBindAddr for &str {
    fn port(&self) -> io::Result<u16> {
        self.rsplit_once(':')
            .and_then(|(_, p)| p.parse().ok())
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("{self:?} has no port; write it as \"0.0.0.0:PORT\""),
                )
            })
    }
}

impl ToBindAddr for (&str, u16) {
    fn port(&self) -> io::Result<u16> {
        Ok(self.1)
    }
}

/// The name of `addr`'s node (sim-core's `Addr` prints as `name:port`).
fn node_name(addr: Addr) -> String {
    let text = format!("{addr:?}");
    match text.rsplit_once(':') {
        Some((name, _)) => name.to_string(),
        None => text,
    }
}

/// A TCP listener with tokio's signatures, over sim-core's streams.
pub struct TcpListener {
    inner: sim_core::net::Listener,
}

impl std::fmt::Debug for TcpListener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TcpListener({:?})", self.inner.local_addr())
    }
}

impl TcpListener {
    /// Listens on the port of `addr` on this node (the IP part is ignored).
    pub async fn bind(addr: impl ToBindAddr) -> io::Result<TcpListener> {
        let port = addr.port()?;
        sim_core::net::Listener::bind(port)
            .map(|inner| TcpListener { inner })
            .map_err(|e| io::Error::new(io::ErrorKind::AddrInUse, e.to_string()))
    }

    /// Accepts the next connection.
    pub async fn accept(&self) -> io::Result<(TcpStream, SocketAddr)> {
        let (stream, from) = Wrapped(self.inner.accept()).await?;
        Ok((TcpStream::new(stream), socket_addr(from)))
    }

    /// This listener's address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        Ok(socket_addr(self.inner.local_addr()))
    }
}

/// Polls a sim-core future with a waker that also reaches the node (see [`both`]).
struct Wrapped<F>(F);

impl<F: Future + Unpin> Future for Wrapped<F> {
    type Output = F::Output;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        with_both(cx, |cx| Pin::new(&mut self.0).poll(cx))
    }
}

/// A TCP connection with tokio's signatures (`tokio::io::AsyncRead`/`AsyncWrite`), over a
/// sim-core stream: ordered and reliable until reset, with every stream fault.
///
/// ```
/// use sim_core::sim::{Config, Sim};
/// use sim_tokio::net::{TcpListener, TcpStream};
/// use sim_tokio::TokioSim;
/// use tokio::io::{AsyncReadExt, AsyncWriteExt};
///
/// let mut sim = Sim::new(Config::default());
/// sim.tokio_node("server", |_| async {
///     let listener = TcpListener::bind("0.0.0.0:80").await.unwrap();
///     loop {
///         let (mut conn, _) = listener.accept().await.unwrap();
///         tokio::task::spawn_local(async move {
///             let mut buf = Vec::new();
///             conn.read_to_end(&mut buf).await.unwrap();
///             conn.write_all(&buf).await.unwrap();
///             conn.shutdown().await.unwrap();
///         });
///     }
/// });
/// sim.tokio_client("client", |_| async {
///     let conn = TcpStream::connect("server:80").await.unwrap();
///     let (mut rx, mut tx) = conn.into_split();
///     tx.write_all(b"hello").await.unwrap();
///     tx.shutdown().await.unwrap();
///     let mut echo = Vec::new();
///     rx.read_to_end(&mut echo).await.unwrap();
///     assert_eq!(echo, b"hello");
/// });
/// assert!(sim.run_seed(5).outcome.class.is_pass());
/// ```
pub struct TcpStream {
    inner: std::rc::Rc<sim_core::net::Stream>,
}

impl std::fmt::Debug for TcpStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "TcpStream({:?} -> {:?})",
            self.inner.local_addr(),
            self.inner.peer_addr()
        )
    }
}

impl TcpStream {
    fn new(stream: sim_core::net::Stream) -> TcpStream {
        TcpStream {
            inner: std::rc::Rc::new(stream),
        }
    }

    /// Connects to `addr` (`"name:port"`, `(name, port)` or a `SocketAddr`).
    pub async fn connect(addr: impl ToSimAddr) -> io::Result<TcpStream> {
        let to = addr.to_sim_addr()?;
        let connect = sim_core::net::Stream::connect(&node_name(to), to.port);
        // The SYN is something others see.
        note_visible();
        let stream = Wrapped(Box::pin(connect)).await?;
        Ok(TcpStream::new(stream))
    }

    /// This end's address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        Ok(socket_addr(self.inner.local_addr()))
    }

    /// The other end's address.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        Ok(socket_addr(self.inner.peer_addr()))
    }

    /// Splits into a read half and a write half that can move to different tasks.
    pub fn into_split(self) -> (OwnedReadHalf, OwnedWriteHalf) {
        (
            OwnedReadHalf {
                inner: self.inner.clone(),
            },
            OwnedWriteHalf { inner: self.inner },
        )
    }
}

fn read_into(
    stream: &sim_core::net::Stream,
    cx: &mut Context<'_>,
    buf: &mut tokio::io::ReadBuf<'_>,
) -> Poll<io::Result<()>> {
    let mut reader = stream;
    let unfilled = buf.initialize_unfilled();
    let read = with_both(cx, |cx| {
        futures::io::AsyncRead::poll_read(Pin::new(&mut reader), cx, unfilled)
    });
    match read {
        Poll::Ready(Ok(n)) => {
            buf.advance(n);
            Poll::Ready(Ok(()))
        }
        Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
        Poll::Pending => Poll::Pending,
    }
}

fn write_from(
    stream: &sim_core::net::Stream,
    cx: &mut Context<'_>,
    buf: &[u8],
) -> Poll<io::Result<usize>> {
    let mut writer = stream;
    let result = with_both(cx, |cx| {
        futures::io::AsyncWrite::poll_write(Pin::new(&mut writer), cx, buf)
    });
    if matches!(result, Poll::Ready(Ok(n)) if n > 0) {
        note_visible();
    }
    result
}

fn shutdown(stream: &sim_core::net::Stream) -> Poll<io::Result<()>> {
    let result = stream.shutdown();
    note_visible();
    Poll::Ready(result)
}

impl tokio::io::AsyncRead for TcpStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        read_into(&self.inner, cx, buf)
    }
}

impl tokio::io::AsyncWrite for TcpStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        write_from(&self.inner, cx, buf)
    }
    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    /// Half-closes the connection (the peer reads EOF), as tokio's does.
    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        shutdown(&self.inner)
    }
}

/// The read half of [`TcpStream::into_split`].
#[derive(Debug)]
pub struct OwnedReadHalf {
    inner: std::rc::Rc<sim_core::net::Stream>,
}

/// The write half of [`TcpStream::into_split`]; dropping it does not close the connection
/// (call `shutdown`).
#[derive(Debug)]
pub struct OwnedWriteHalf {
    inner: std::rc::Rc<sim_core::net::Stream>,
}

impl tokio::io::AsyncRead for OwnedReadHalf {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        read_into(&self.inner, cx, buf)
    }
}

impl tokio::io::AsyncWrite for OwnedWriteHalf {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        write_from(&self.inner, cx, buf)
    }
    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        shutdown(&self.inner)
    }
}
