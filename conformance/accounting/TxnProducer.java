import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;

import java.util.Properties;

/**
 * Writes committed transactions with the release's own Java producer, so the partition's log holds
 * transaction markers (control batches) between data batches, for kafkarig.accounting_live.
 *
 * Usage: TxnProducer BOOTSTRAP TOPIC TRANSACTIONS RECORDS_EACH
 */
public final class TxnProducer {
    public static void main(String[] args) throws Exception {
        Properties p = new Properties();
        p.put("bootstrap.servers", args[0]);
        p.put("transactional.id", "kafkafmt-accounting");
        p.put("enable.idempotence", "true");
        p.put("acks", "all");
        p.put("key.serializer", "org.apache.kafka.common.serialization.StringSerializer");
        p.put("value.serializer", "org.apache.kafka.common.serialization.StringSerializer");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            producer.initTransactions();
            for (int t = 0; t < Integer.parseInt(args[2]); t++) {
                producer.beginTransaction();
                for (int i = 0; i < Integer.parseInt(args[3]); i++)
                    producer.send(new ProducerRecord<>(args[1], 0, "key-" + i, "transaction " + t + " value " + i));
                producer.flush();
                producer.commitTransaction();
            }
        }
        System.out.println("committed");
    }
}
