// Type declarations for @ferromq/node (zeromq.js-v6-shaped API over libzmq.so.5).

/// <reference types="node" />

export type MessageLike = ArrayBufferView | ArrayBuffer | string | null | undefined | number
/** A received message: one Buffer per frame. */
export type Message = Buffer[]

export interface ZmqError extends Error {
  /** errno name, e.g. 'EAGAIN', 'EADDRINUSE', 'EFSM', 'EHOSTUNREACH', 'EBADF' (closed). */
  code: string
  errno?: number
  /** endpoint of a failed bind/unbind/connect/disconnect */
  address?: string
}

export interface ContextOptions {
  ioThreads?: number
  maxSockets?: number
  maxMessageSize?: number
  ipv6?: boolean
  blocky?: boolean
}

export class Context {
  constructor(options?: ContextOptions)
  ioThreads: number
  maxSockets: number
  maxMessageSize: number
  ipv6: boolean
  blocky: boolean
  /** Closes every socket of this context and terminates it; blocks while sockets with a
   *  linger flush their queues. */
  term(): void
}

/** The default context (non-blocking: sockets default to linger 0). */
export const context: Context

export interface SocketOptions {
  context?: Context
  affinity?: number
  rate?: number
  recoveryInterval?: number
  sendBufferSize?: number
  receiveBufferSize?: number
  linger?: number
  reconnectInterval?: number
  backlog?: number
  reconnectMaxInterval?: number
  maxMessageSize?: number
  sendHighWaterMark?: number
  receiveHighWaterMark?: number
  multicastHops?: number
  /** ms; -1 waits forever (default), 0 rejects with EAGAIN when the message cannot be queued now */
  sendTimeout?: number
  /** ms; -1 waits forever (default), 0 rejects with EAGAIN when nothing is available now */
  receiveTimeout?: number
  /** µs a receive()/for-await/receiveMany() that finds nothing keeps trying before it waits
   *  on the event loop (blocking it meanwhile); adaptive, backs off when spins fail.
   *  Default: FERROMQ_SPIN_US, else 50. 0 never spins. Not a libzmq option. */
  receiveSpin?: number
  tcpKeepalive?: number
  tcpKeepaliveCount?: number
  tcpKeepaliveIdle?: number
  tcpKeepaliveInterval?: number
  immediate?: boolean
  ipv6?: boolean
  plainServer?: boolean
  plainUsername?: string | null
  plainPassword?: string | null
  curveServer?: boolean
  curvePublicKey?: string
  curveSecretKey?: string
  curveServerKey?: string
  zapDomain?: string | null
  typeOfService?: number
  handshakeInterval?: number
  socksProxy?: string | null
  heartbeatInterval?: number
  heartbeatTimeToLive?: number
  heartbeatTimeout?: number
  connectTimeout?: number
  tcpMaxRetransmitTimeout?: number
  multicastMaxTransportDataUnitSize?: number
  interface?: string | null
}

export class Socket {
  protected constructor(type: number, options?: SocketOptions)
  readonly context: Context
  readonly closed: boolean
  /** a message can be received right now */
  readonly readable: boolean
  /** a message can be sent right now */
  readonly writable: boolean
  readonly type: number
  readonly lastEndpoint: string | null
  readonly securityMechanism: null | 'plain' | 'curve' | 'gssapi'
  readonly threadSafe: boolean

  affinity: number
  rate: number
  recoveryInterval: number
  sendBufferSize: number
  receiveBufferSize: number
  linger: number
  reconnectInterval: number
  backlog: number
  reconnectMaxInterval: number
  maxMessageSize: number
  sendHighWaterMark: number
  receiveHighWaterMark: number
  multicastHops: number
  sendTimeout: number
  receiveTimeout: number
  receiveSpin: number
  tcpKeepalive: number
  tcpKeepaliveCount: number
  tcpKeepaliveIdle: number
  tcpKeepaliveInterval: number
  immediate: boolean
  ipv6: boolean
  plainServer: boolean
  plainUsername: string | null
  plainPassword: string | null
  curveServer: boolean
  curvePublicKey: string
  curveSecretKey: string
  curveServerKey: string
  zapDomain: string | null
  typeOfService: number
  handshakeInterval: number
  socksProxy: string | null
  heartbeatInterval: number
  heartbeatTimeToLive: number
  heartbeatTimeout: number
  connectTimeout: number
  tcpMaxRetransmitTimeout: number
  multicastMaxTransportDataUnitSize: number
  interface: string | null

  bind(address: string): Promise<void>
  unbind(address: string): Promise<void>
  connect(address: string): void
  disconnect(address: string): void
  /** Closes now; pending send/receive promises reject with code EBADF, iterators end. */
  close(): void

  /** Resolves as soon as the message is queued (immediately when there is room). */
  send(message: MessageLike | MessageLike[]): Promise<void>
  /** Batch send of messages[start..end) without waiting; returns how many were queued. */
  sendMany(messages: Array<MessageLike | MessageLike[]>, start?: number, end?: number): number
  /** Resolves when a message can be sent. */
  writableAsync(): Promise<void>

  receive(): Promise<Message>
  /** Receives one frame into `buf` (reused by the caller), as zmq_recv / pyzmq's
   *  recv_into: copies at most buf.byteLength bytes, resolves with the frame's full size.
   *  Check `receiveMore` for further frames of the same message. */
  receiveInto(buf: ArrayBufferView): Promise<number>
  /** After receiveInto(): more frames of the same message follow. */
  readonly receiveMore: boolean
  /** Resolves with 1..max messages (what is available once anything is). */
  receiveMany(max?: number): Promise<Message[]>
  [Symbol.asyncIterator](): AsyncIterator<Message, undefined>

  /** Streams every received message: in batches ('messages') or one by one ('message'). */
  on(event: 'messages', listener: (batch: Message[]) => void): this
  on(event: 'message', listener: (message: Message) => void): this
  off(event: 'messages' | 'message', listener: (...args: any[]) => void): this
  removeAllListeners(): this
}

export class Pair extends Socket { constructor(options?: SocketOptions) }
export class Publisher extends Socket {
  constructor(options?: SocketOptions & { noDrop?: boolean; conflate?: boolean; invertMatching?: boolean })
  noDrop: boolean | null
  conflate: boolean
  invertMatching: boolean
}
export class Subscriber extends Socket {
  constructor(options?: SocketOptions & { conflate?: boolean; invertMatching?: boolean })
  conflate: boolean
  invertMatching: boolean
  /** no arguments: everything */
  subscribe(...prefixes: Array<string | Buffer>): void
  unsubscribe(...prefixes: Array<string | Buffer>): void
}
export class Request extends Socket {
  constructor(options?: SocketOptions & { routingId?: string; probeRouter?: boolean; correlate?: boolean; relaxed?: boolean })
  routingId: string | null
  probeRouter: boolean | null
  correlate: boolean | null
  relaxed: boolean | null
}
export class Reply extends Socket {
  constructor(options?: SocketOptions & { routingId?: string })
  routingId: string | null
}
export class Dealer extends Socket {
  constructor(options?: SocketOptions & { routingId?: string; probeRouter?: boolean; conflate?: boolean })
  routingId: string | null
  probeRouter: boolean | null
  conflate: boolean
}
export class Router extends Socket {
  constructor(options?: SocketOptions & { routingId?: string; mandatory?: boolean; probeRouter?: boolean; handover?: boolean })
  routingId: string | null
  mandatory: boolean | null
  probeRouter: boolean | null
  handover: boolean | null
  connect(address: string, options?: { routingId?: string }): void
}
export class Pull extends Socket {
  constructor(options?: SocketOptions & { conflate?: boolean })
  conflate: boolean
}
export class Push extends Socket {
  constructor(options?: SocketOptions & { conflate?: boolean })
  conflate: boolean
}
export class XPublisher extends Socket {
  constructor(options?: SocketOptions & { noDrop?: boolean; manual?: boolean; welcomeMessage?: string; invertMatching?: boolean; verbosity?: null | 'allSubs' | 'allSubsUnsubs' })
  noDrop: boolean | null
  manual: boolean | null
  welcomeMessage: string | null
  invertMatching: boolean
  verbosity: null | 'allSubs' | 'allSubsUnsubs'
}
export class XSubscriber extends Socket { constructor(options?: SocketOptions) }
export class Stream extends Socket {
  constructor(options?: SocketOptions & { notify?: boolean })
  notify: boolean | null
  connect(address: string, options?: { routingId?: string }): void
}

export { Publisher as Pub, Subscriber as Sub, Request as Req, Reply as Rep, XPublisher as XPub, XSubscriber as XSub }

/** zmq_version() of the libzmq.so.5 that was loaded */
export const version: string
export const capability: { ipc: boolean; pgm: boolean; tipc: boolean; norm: boolean; curve: boolean; gssapi: boolean; draft: boolean }
export function curveKeyPair(): { publicKey: string; secretKey: string }
export const SocketType: {
  Pair: 0; Publisher: 1; Subscriber: 2; Request: 3; Reply: 4; Dealer: 5; Router: 6
  Pull: 7; Push: 8; XPublisher: 9; XSubscriber: 10; Stream: 11
}
