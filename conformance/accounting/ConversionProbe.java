import com.sun.jdi.Bootstrap;
import com.sun.jdi.Field;
import com.sun.jdi.IntegerValue;
import com.sun.jdi.LongValue;
import com.sun.jdi.Method;
import com.sun.jdi.ObjectReference;
import com.sun.jdi.ReferenceType;
import com.sun.jdi.Value;
import com.sun.jdi.VirtualMachine;
import com.sun.jdi.connect.AttachingConnector;
import com.sun.jdi.connect.Connector;
import com.sun.jdi.event.BreakpointEvent;
import com.sun.jdi.event.ClassPrepareEvent;
import com.sun.jdi.event.Event;
import com.sun.jdi.event.EventSet;
import com.sun.jdi.request.BreakpointRequest;
import com.sun.jdi.request.ClassPrepareRequest;
import com.sun.jdi.request.EventRequest;

import javax.management.InstanceNotFoundException;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.List;
import java.util.Map;

/**
 * Reads a running Kafka broker's own conversion accounting (KIP-188), for kafkarig.accounting_live.
 *
 * Usage: ConversionProbe JMX_PORT [JDWP_PORT STATS_CLASS]
 *
 * On each "read" line from stdin it prints one JSON line: for Produce and Fetch, the
 * RequestMetrics TemporaryMemoryBytes histogram's Count and Mean x Count (rounded: its sum), the
 * BrokerTopicMetrics *MessageConversionsPerSec meter's Count (-1 when the MBean does not exist) and the
 * RequestMetrics MessageConversionsTimeMs histogram's Count and Mean x Count; with
 * JDWP, the sums over every call of STATS_CLASS.add(other) seen so far of the argument's
 * temporaryMemoryBytes and numRecordsConverted (the chunks LazyDownConversionRecordsSend counts), read
 * by a breakpoint. "quit" ends it (the breakpoints removed, the broker left running).
 */
public final class ConversionProbe {
    private static long hits, tempBytes, records;

    public static void main(String[] args) throws Exception {
        JMXServiceURL url = new JMXServiceURL("service:jmx:rmi:///jndi/rmi://127.0.0.1:" + args[0] + "/jmxrmi");
        JMXConnector jmx = JMXConnectorFactory.connect(url);
        MBeanServerConnection mbs = jmx.getMBeanServerConnection();
        VirtualMachine vm = args.length > 2 ? attach(args[1], args[2]) : null;
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        System.out.println("{\"ready\": true}");
        System.out.flush();
        String line;
        while ((line = in.readLine()) != null) {
            if (line.trim().equals("quit"))
                break;
            StringBuilder sb = new StringBuilder("{");
            for (String req : new String[]{"Produce", "Fetch"}) {
                long[] h = histogram(mbs, "kafka.network:type=RequestMetrics,name=TemporaryMemoryBytes,request=" + req);
                long meter = count(mbs, "kafka.server:type=BrokerTopicMetrics,name=" + req + "MessageConversionsPerSec");
                long[] t = histogram(mbs, "kafka.network:type=RequestMetrics,name=MessageConversionsTimeMs,request=" + req);
                sb.append('"').append(req).append("\": [").append(h[0]).append(", ").append(h[1]).append(", ")
                  .append(meter).append(", ").append(t[0]).append(", ").append(t[1]).append("], ");
            }
            synchronized (ConversionProbe.class) {
                sb.append("\"jdwp\": [").append(vm == null ? -1 : hits).append(", ").append(tempBytes).append(", ")
                  .append(records).append("]}");
            }
            System.out.println(sb);
            System.out.flush();
        }
        if (vm != null)
            vm.dispose();
        jmx.close();
    }

    private static long[] histogram(MBeanServerConnection mbs, String name) throws Exception {
        try {
            ObjectName on = new ObjectName(name);
            long count = ((Number) mbs.getAttribute(on, "Count")).longValue();
            double mean = ((Number) mbs.getAttribute(on, "Mean")).doubleValue();
            return new long[]{count, Math.round(mean * count)};
        } catch (InstanceNotFoundException e) {
            return new long[]{-1, -1};
        }
    }

    private static long count(MBeanServerConnection mbs, String name) throws Exception {
        try {
            return ((Number) mbs.getAttribute(new ObjectName(name), "Count")).longValue();
        } catch (InstanceNotFoundException e) {
            return -1;
        }
    }

    private static VirtualMachine attach(String port, String statsClass) throws Exception {
        AttachingConnector conn = null;
        for (AttachingConnector c : Bootstrap.virtualMachineManager().attachingConnectors())
            if (c.name().equals("com.sun.jdi.SocketAttach"))
                conn = c;
        Map<String, Connector.Argument> a = conn.defaultArguments();
        a.get("hostname").setValue("127.0.0.1");
        a.get("port").setValue(port);
        VirtualMachine vm = conn.attach(a);
        ClassPrepareRequest cpr = vm.eventRequestManager().createClassPrepareRequest();
        cpr.addClassFilter(statsClass);
        cpr.setSuspendPolicy(EventRequest.SUSPEND_EVENT_THREAD);
        cpr.enable();
        for (ReferenceType t : vm.classesByName(statsClass))
            breakOnAdd(vm, t);
        Thread events = new Thread(() -> {
            try {
                while (true) {
                    EventSet set = vm.eventQueue().remove();
                    for (Event e : set) {
                        if (e instanceof ClassPrepareEvent)
                            breakOnAdd(vm, ((ClassPrepareEvent) e).referenceType());
                        else if (e instanceof BreakpointEvent)
                            count((BreakpointEvent) e);
                    }
                    set.resume();
                }
            } catch (Exception e) {
                // the VM disconnected (broker stopped, or dispose)
            }
        }, "jdwp-events");
        events.setDaemon(true);
        events.start();
        return vm;
    }

    private static void breakOnAdd(VirtualMachine vm, ReferenceType t) {
        for (Method m : t.methodsByName("add")) {
            if (m.argumentTypeNames().size() != 1)
                continue;
            BreakpointRequest br = vm.eventRequestManager().createBreakpointRequest(m.location());
            br.setSuspendPolicy(EventRequest.SUSPEND_EVENT_THREAD);
            br.enable();
        }
    }

    private static void count(BreakpointEvent e) throws Exception {
        List<Value> argv = e.thread().frame(0).getArgumentValues();
        ObjectReference other = (ObjectReference) argv.get(0);
        ReferenceType t = other.referenceType();
        Field temp = t.fieldByName("temporaryMemoryBytes");
        Field num = t.fieldByName("numRecordsConverted");
        long tb = ((LongValue) other.getValue(temp)).value();
        int n = ((IntegerValue) other.getValue(num)).value();
        synchronized (ConversionProbe.class) {
            hits++;
            tempBytes += tb;
            records += n;
        }
    }
}
