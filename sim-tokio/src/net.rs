//! A tokio-shaped network over sim-core's: `UdpSocket` with tokio's method signatures,
//! backed by sim-core datagrams with all their faults (latency, loss, duplication,
//! partitions, clogs, crashes), and name resolution by node name.
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

fn both(cx: &Context<'_>) -> Waker {
    match node_waker() {
        Some(node) => Waker::from(Arc::new(Both(cx.waker().clone(), node))),
        None => cx.waker().clone(),
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
        let waker = both(cx);
        let mut inner_cx = Context::from_waker(&waker);
        let mut recv = std::pin::pin!(self.socket.inner.recv());
        recv.as_mut().poll(&mut inner_cx)
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
