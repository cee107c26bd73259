import org.zeromq.ZMQ;

/**
 * A ZMTP 2.0 peer: JeroMQ 0.3.x, a port of libzmq 3.2. One role per run, printing what it
 * received; run.sh pairs it with zmtp2_side.c on the library under test and checks both.
 *
 *   push EP   connect a PUSH, send two two-frame messages (m0|tail, m1|tail)
 *   pull EP   bind a PULL on EP's host, a free port (printed: "ready PORT"), print two messages
 *   sub EP    connect a SUB to topic "h", print two messages
 *   dealer EP connect a DEALER with routing id "old", send m0|tail, print the reply
 */
public class OldPeer {
    public static void main(String[] args) throws Exception {
        String role = args[0], endpoint = args[1];
        ZMQ.Context ctx = ZMQ.context(1);
        int type = switch (role) {
            case "push" -> ZMQ.PUSH;
            case "pull" -> ZMQ.PULL;
            case "sub" -> ZMQ.SUB;
            default -> ZMQ.DEALER;
        };
        ZMQ.Socket s = ctx.socket(type);
        s.setLinger(1000);
        s.setReceiveTimeOut(5000);
        if (role.equals("dealer")) s.setIdentity("old".getBytes());
        if (role.equals("sub")) s.subscribe("h".getBytes());
        if (role.equals("pull")) {
            System.out.println("ready " + s.bindToRandomPort(endpoint));
        } else {
            s.connect(endpoint);
        }
        if (role.equals("push") || role.equals("dealer")) {
            int n = role.equals("push") ? 2 : 1;
            for (int i = 0; i < n; i++) {
                s.send(("m" + i).getBytes(), ZMQ.SNDMORE);
                s.send("tail".getBytes(), 0);
            }
        }
        if (!role.equals("push")) {
            for (int i = 0; i < (role.equals("dealer") ? 1 : 2); i++) {
                byte[] f = s.recv(0);
                if (f == null) {
                    System.out.println("timeout");
                    break;
                }
                StringBuilder text = new StringBuilder(new String(f));
                while (s.hasReceiveMore()) text.append('|').append(new String(s.recv(0)));
                System.out.println("got " + text);
            }
        }
        s.close();
        ctx.term();
    }
}
