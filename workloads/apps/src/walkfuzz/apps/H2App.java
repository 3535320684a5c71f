package walkfuzz.apps;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * H2 (in-memory, jdbc:h2:mem:) under a TPC-C-like load. The schema is TPC-C's nine tables,
 * trimmed of columns nobody reads. The workers first load the data together (items, stock,
 * customers with their history, orders with their lines), then each runs terminal
 * transactions with the TPC-C mix: new-order 45%, payment 43%, order-status 4%, delivery 4%,
 * stock-level 4%, with prepared statements, joins, subqueries, row locks (SELECT ... FOR
 * UPDATE) and updates. Lock timeouts and deadlocks abort a transaction, which is counted and
 * not retried; 1% of new-orders roll back on an unknown item, as TPC-C asks.
 */
final class H2App extends App {
    static final int DISTRICTS = 10;
    static final String[] SYLLABLES = {"BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"};

    private String url;
    private Connection admin;
    private int warehouses, customers, items, newOrdersPerDistrict;
    private final ConcurrentLinkedQueue<Runnable> loadTasks = new ConcurrentLinkedQueue<>();
    private CountDownLatch loaded;
    private volatile boolean loadFailed;
    private final java.util.concurrent.atomic.AtomicBoolean loadLogged = new java.util.concurrent.atomic.AtomicBoolean();

    // Committed transactions by kind, and other outcomes.
    private final AtomicLong newOrders = new AtomicLong(), payments = new AtomicLong(), orderStatus = new AtomicLong(),
            deliveries = new AtomicLong(), stockLevels = new AtomicLong(), rollbacks = new AtomicLong(),
            aborted = new AtomicLong(), deliveredOrders = new AtomicLong(), readRows = new AtomicLong();

    @Override
    Map<String, long[]> keys() {
        return Map.of(
                "warehouses", new long[] {2, 1, 100},
                "customers", new long[] {30, 10, 3000},
                "items", new long[] {1000, 100, 100_000});
    }

    @Override
    void setup(Run run) throws Exception {
        warehouses = run.cfg.getInt("warehouses");
        customers = run.cfg.getInt("customers");
        items = run.cfg.getInt("items");
        newOrdersPerDistrict = customers * 3 / 10;
        Class.forName("org.h2.Driver");
        url = "jdbc:h2:mem:walkfuzz_" + Long.toHexString(run.cfg.seed) + "_" + ProcessHandle.current().pid()
                + ";DB_CLOSE_DELAY=-1;DB_CLOSE_ON_EXIT=FALSE;LOCK_TIMEOUT=1000";
        admin = DriverManager.getConnection(url, "sa", "");
        try (Statement s = admin.createStatement()) {
            s.execute("CREATE TABLE warehouse (w_id INT PRIMARY KEY, w_name VARCHAR(10), w_street VARCHAR(20),"
                    + " w_city VARCHAR(20), w_zip CHAR(9), w_tax DECIMAL(4,4), w_ytd DECIMAL(14,2))");
            s.execute("CREATE TABLE district (d_w_id INT, d_id INT, d_name VARCHAR(10), d_street VARCHAR(20),"
                    + " d_city VARCHAR(20), d_zip CHAR(9), d_tax DECIMAL(4,4), d_ytd DECIMAL(14,2), d_next_o_id INT,"
                    + " PRIMARY KEY (d_w_id, d_id))");
            s.execute("CREATE TABLE customer (c_w_id INT, c_d_id INT, c_id INT, c_first VARCHAR(16), c_middle CHAR(2),"
                    + " c_last VARCHAR(16), c_phone CHAR(16), c_since TIMESTAMP, c_credit CHAR(2), c_credit_lim DECIMAL(12,2),"
                    + " c_discount DECIMAL(4,4), c_balance DECIMAL(14,2), c_ytd_payment DECIMAL(14,2), c_payment_cnt INT,"
                    + " c_delivery_cnt INT, c_data VARCHAR(500), PRIMARY KEY (c_w_id, c_d_id, c_id))");
            s.execute("CREATE INDEX customer_name ON customer (c_w_id, c_d_id, c_last, c_first)");
            s.execute("CREATE TABLE history (h_c_id INT, h_c_d_id INT, h_c_w_id INT, h_d_id INT, h_w_id INT,"
                    + " h_date TIMESTAMP, h_amount DECIMAL(8,2), h_data VARCHAR(24))");
            s.execute("CREATE TABLE item (i_id INT PRIMARY KEY, i_im_id INT, i_name VARCHAR(24), i_price DECIMAL(7,2), i_data VARCHAR(50))");
            s.execute("CREATE TABLE stock (s_w_id INT, s_i_id INT, s_quantity INT, s_dist CHAR(24), s_ytd INT,"
                    + " s_order_cnt INT, s_remote_cnt INT, s_data VARCHAR(50), PRIMARY KEY (s_w_id, s_i_id))");
            s.execute("CREATE TABLE orders (o_w_id INT, o_d_id INT, o_id INT, o_c_id INT, o_entry_d TIMESTAMP,"
                    + " o_carrier_id INT, o_ol_cnt INT, o_all_local INT, PRIMARY KEY (o_w_id, o_d_id, o_id))");
            s.execute("CREATE INDEX orders_customer ON orders (o_w_id, o_d_id, o_c_id, o_id)");
            s.execute("CREATE TABLE new_order (no_w_id INT, no_d_id INT, no_o_id INT, PRIMARY KEY (no_w_id, no_d_id, no_o_id))");
            s.execute("CREATE TABLE order_line (ol_w_id INT, ol_d_id INT, ol_o_id INT, ol_number INT, ol_i_id INT,"
                    + " ol_supply_w_id INT, ol_delivery_d TIMESTAMP, ol_quantity INT, ol_amount DECIMAL(8,2), ol_dist_info CHAR(24),"
                    + " PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number))");
        }
        admin.setAutoCommit(false);
        // Load tasks: the workers run them together, each on its own connection.
        for (int lo = 1; lo <= items; lo += 250) {
            int a = lo, b = Math.min(items, lo + 249);
            loadTasks.add(() -> loadItems(run, a, b));
        }
        for (int w = 1; w <= warehouses; w++) {
            int ww = w;
            loadTasks.add(() -> loadWarehouse(run, ww));
            for (int lo = 1; lo <= items; lo += 250) {
                int a = lo, b = Math.min(items, lo + 249);
                loadTasks.add(() -> loadStock(run, ww, a, b));
            }
            for (int d = 1; d <= DISTRICTS; d++) {
                int dd = d;
                loadTasks.add(() -> loadDistrict(run, ww, dd));
            }
        }
        loaded = new CountDownLatch(loadTasks.size());
    }

    // ---------------------------------------------------------------- loading

    private final ThreadLocal<Connection> loadConn = new ThreadLocal<>();

    private Connection conn() throws SQLException {
        Connection c = loadConn.get();
        if (c == null) {
            c = DriverManager.getConnection(url, "sa", "");
            c.setAutoCommit(false);
            loadConn.set(c);
        }
        return c;
    }

    private interface SqlTask {
        void run(Connection c) throws SQLException;
    }

    private void load(SqlTask t) {
        try {
            Connection c = conn();
            t.run(c);
            c.commit();
        } catch (SQLException e) {
            loadFailed = true;
            throw new RuntimeException("load: " + e, e);
        }
    }

    static String astring(SplittableRandom r, int min, int max) {
        int n = min + r.nextInt(max - min + 1);
        char[] c = new char[n];
        for (int i = 0; i < n; i++) {
            int k = r.nextInt(62);
            c[i] = (char) (k < 10 ? '0' + k : k < 36 ? 'a' + k - 10 : 'A' + k - 36);
        }
        return new String(c);
    }

    static String nstring(SplittableRandom r, int n) {
        char[] c = new char[n];
        for (int i = 0; i < n; i++) c[i] = (char) ('0' + r.nextInt(10));
        return new String(c);
    }

    static String lastName(int n) {
        return SYLLABLES[n / 100 % 10] + SYLLABLES[n / 10 % 10] + SYLLABLES[n % 10];
    }

    static BigDecimal money(SplittableRandom r, int lo, int hi) { // cents
        return BigDecimal.valueOf(lo + r.nextInt(hi - lo + 1), 2);
    }

    static int nurand(SplittableRandom r, int a, int x, int y, int c) {
        return (((r.nextInt(a + 1) | (x + r.nextInt(y - x + 1))) + c) % (y - x + 1)) + x;
    }

    /** Number of distinct last names per district: about three customers share one. */
    private int lastNames() {
        return Math.max(1, Math.min(1000, customers / 3));
    }

    private void loadItems(Run run, int lo, int hi) {
        SplittableRandom r = run.random(1L << 40 | lo);
        load(c -> {
            try (PreparedStatement p = c.prepareStatement("INSERT INTO item VALUES (?,?,?,?,?)")) {
                for (int i = lo; i <= hi; i++) {
                    String data = astring(r, 26, 50);
                    if (r.nextInt(10) == 0) data = data.substring(0, 10) + "ORIGINAL" + data.substring(18);
                    p.setInt(1, i);
                    p.setInt(2, 1 + r.nextInt(10000));
                    p.setString(3, astring(r, 14, 24));
                    p.setBigDecimal(4, money(r, 100, 10000));
                    p.setString(5, data);
                    p.addBatch();
                }
                p.executeBatch();
            }
        });
    }

    private void loadWarehouse(Run run, int w) {
        SplittableRandom r = run.random(2L << 40 | w);
        load(c -> {
            try (PreparedStatement p = c.prepareStatement("INSERT INTO warehouse VALUES (?,?,?,?,?,?,?)")) {
                p.setInt(1, w);
                p.setString(2, astring(r, 6, 10));
                p.setString(3, astring(r, 10, 20));
                p.setString(4, astring(r, 10, 20));
                p.setString(5, nstring(r, 4) + "11111");
                p.setBigDecimal(6, BigDecimal.valueOf(r.nextInt(2001), 4));
                p.setBigDecimal(7, BigDecimal.valueOf(3_000_000L * DISTRICTS, 2)); // = sum of the districts' d_ytd
                p.executeUpdate();
            }
        });
    }

    private void loadStock(Run run, int w, int lo, int hi) {
        SplittableRandom r = run.random(3L << 40 | (long) w << 20 | lo);
        load(c -> {
            try (PreparedStatement p = c.prepareStatement("INSERT INTO stock VALUES (?,?,?,?,?,?,?,?)")) {
                for (int i = lo; i <= hi; i++) {
                    p.setInt(1, w);
                    p.setInt(2, i);
                    p.setInt(3, 10 + r.nextInt(91));
                    p.setString(4, astring(r, 24, 24));
                    p.setInt(5, 0);
                    p.setInt(6, 0);
                    p.setInt(7, 0);
                    p.setString(8, astring(r, 26, 50));
                    p.addBatch();
                }
                p.executeBatch();
            }
        });
    }

    private void loadDistrict(Run run, int w, int d) {
        SplittableRandom r = run.random(4L << 40 | (long) w << 20 | d);
        Timestamp now = new Timestamp(System.currentTimeMillis());
        load(c -> {
            try (PreparedStatement p = c.prepareStatement("INSERT INTO district VALUES (?,?,?,?,?,?,?,?,?)")) {
                p.setInt(1, w);
                p.setInt(2, d);
                p.setString(3, astring(r, 6, 10));
                p.setString(4, astring(r, 10, 20));
                p.setString(5, astring(r, 10, 20));
                p.setString(6, nstring(r, 4) + "11111");
                p.setBigDecimal(7, BigDecimal.valueOf(r.nextInt(2001), 4));
                p.setBigDecimal(8, BigDecimal.valueOf(3_000_000L, 2));
                p.setInt(9, customers + 1);
                p.executeUpdate();
            }
            try (PreparedStatement p = c.prepareStatement("INSERT INTO customer VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
                    PreparedStatement h = c.prepareStatement("INSERT INTO history VALUES (?,?,?,?,?,?,?,?)")) {
                for (int i = 1; i <= customers; i++) {
                    p.setInt(1, w);
                    p.setInt(2, d);
                    p.setInt(3, i);
                    p.setString(4, astring(r, 8, 16));
                    p.setString(5, "OE");
                    p.setString(6, lastName(i <= lastNames() ? i - 1 : r.nextInt(lastNames())));
                    p.setString(7, nstring(r, 16));
                    p.setTimestamp(8, now);
                    p.setString(9, r.nextInt(10) == 0 ? "BC" : "GC");
                    p.setBigDecimal(10, BigDecimal.valueOf(5_000_000L, 2));
                    p.setBigDecimal(11, BigDecimal.valueOf(r.nextInt(5001), 4));
                    p.setBigDecimal(12, BigDecimal.valueOf(-1000, 2));
                    p.setBigDecimal(13, BigDecimal.valueOf(1000, 2));
                    p.setInt(14, 1);
                    p.setInt(15, 0);
                    p.setString(16, astring(r, 300, 500));
                    p.addBatch();
                    h.setInt(1, i);
                    h.setInt(2, d);
                    h.setInt(3, w);
                    h.setInt(4, d);
                    h.setInt(5, w);
                    h.setTimestamp(6, now);
                    h.setBigDecimal(7, BigDecimal.valueOf(1000, 2));
                    h.setString(8, astring(r, 12, 24));
                    h.addBatch();
                }
                p.executeBatch();
                h.executeBatch();
            }
            // Orders: one per customer, in a random permutation of the customers.
            int[] perm = new int[customers];
            for (int i = 0; i < customers; i++) perm[i] = i + 1;
            for (int i = customers - 1; i > 0; i--) {
                int j = r.nextInt(i + 1), t = perm[i];
                perm[i] = perm[j];
                perm[j] = t;
            }
            try (PreparedStatement o = c.prepareStatement("INSERT INTO orders VALUES (?,?,?,?,?,?,?,?)");
                    PreparedStatement no = c.prepareStatement("INSERT INTO new_order VALUES (?,?,?)");
                    PreparedStatement ol = c.prepareStatement("INSERT INTO order_line VALUES (?,?,?,?,?,?,?,?,?,?)")) {
                for (int id = 1; id <= customers; id++) {
                    boolean delivered = id <= customers - newOrdersPerDistrict;
                    int cnt = 5 + r.nextInt(11);
                    o.setInt(1, w);
                    o.setInt(2, d);
                    o.setInt(3, id);
                    o.setInt(4, perm[id - 1]);
                    o.setTimestamp(5, now);
                    if (delivered) o.setInt(6, 1 + r.nextInt(10));
                    else o.setNull(6, java.sql.Types.INTEGER);
                    o.setInt(7, cnt);
                    o.setInt(8, 1);
                    o.addBatch();
                    if (!delivered) {
                        no.setInt(1, w);
                        no.setInt(2, d);
                        no.setInt(3, id);
                        no.addBatch();
                    }
                    for (int n = 1; n <= cnt; n++) {
                        ol.setInt(1, w);
                        ol.setInt(2, d);
                        ol.setInt(3, id);
                        ol.setInt(4, n);
                        ol.setInt(5, 1 + r.nextInt(items));
                        ol.setInt(6, w);
                        ol.setTimestamp(7, delivered ? now : null);
                        ol.setInt(8, 5);
                        ol.setBigDecimal(9, delivered ? BigDecimal.ZERO.setScale(2) : money(r, 1, 999_999));
                        ol.setString(10, astring(r, 24, 24));
                        ol.addBatch();
                    }
                }
                o.executeBatch();
                no.executeBatch();
                ol.executeBatch();
            }
        });
    }

    // ---------------------------------------------------------------- terminals

    @Override
    void work(Run run, int worker, SplittableRandom rnd) throws Exception {
        // Phase 1: load together.
        for (Runnable t; (t = loadTasks.poll()) != null && run.running() && !loadFailed; ) {
            t.run();
            loaded.countDown();
        }
        if (loaded.getCount() == 0 && loadLogged.compareAndSet(false, true)) {
            System.err.println("walkfuzz.apps h2: load done " + run.elapsedMs() + " ms after start");
        }
        if (!loaded.await(Math.max(1, run.remainingMs()), TimeUnit.MILLISECONDS) || loadFailed) {
            closeQuietly(loadConn.get());
            return;
        }
        // Phase 2: terminal transactions against a home warehouse.
        try (Terminal t = new Terminal(run, conn(), 1 + worker % warehouses, rnd)) {
            while (run.running()) {
                if (t.next()) run.op();
            }
        }
    }

    static void closeQuietly(AutoCloseable c) {
        if (c == null) return;
        try {
            c.close();
        } catch (Exception ignored) {
            // nothing to do at the end of a run
        }
    }

    /** SQL states and H2 error codes of transient failures: lock timeout, deadlock, concurrent update. */
    static boolean transientFailure(SQLException e) {
        String st = e.getSQLState();
        int code = e.getErrorCode();
        return code == 50200 || code == 40001 || code == 90131 || code == 90143 || (st != null && st.startsWith("40"));
    }

    /** One TPC-C terminal: a connection, its prepared statements and its home warehouse. */
    private final class Terminal implements AutoCloseable {
        final Run run;
        final Connection c;
        final int home;
        final SplittableRandom r;
        final int cLast, cId, olId; // NURand C constants
        final PreparedStatement custWhse, distNext, distRead, insOrder, insNewOrder, itemRead, stockLock, stockUpd, insLine;
        final PreparedStatement whseUpd, whseRead, distUpd, custById, custByName, custUpd, custUpdBc, insHist;
        final PreparedStatement lastOrder, minNewOrder, delNewOrder, orderCust, orderCarrier, lineDeliv, lineSum, custDeliv;
        final PreparedStatement distNextRead, stockLevel;

        Terminal(Run run, Connection c, int home, SplittableRandom r) throws SQLException {
            this.run = run;
            this.c = c;
            this.home = home;
            this.r = r;
            cLast = r.nextInt(256);
            cId = r.nextInt(1024);
            olId = r.nextInt(8192);
            custWhse = c.prepareStatement("SELECT c.c_discount, c.c_last, c.c_credit, w.w_tax FROM customer c JOIN warehouse w"
                    + " ON w.w_id = c.c_w_id WHERE c.c_w_id = ? AND c.c_d_id = ? AND c.c_id = ?");
            distNext = c.prepareStatement("UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = ? AND d_id = ?");
            distRead = c.prepareStatement("SELECT d_next_o_id - 1, d_tax FROM district WHERE d_w_id = ? AND d_id = ?");
            insOrder = c.prepareStatement("INSERT INTO orders VALUES (?,?,?,?,?,NULL,?,?)");
            insNewOrder = c.prepareStatement("INSERT INTO new_order VALUES (?,?,?)");
            itemRead = c.prepareStatement("SELECT i_price, i_name, i_data FROM item WHERE i_id = ?");
            stockLock = c.prepareStatement("SELECT s_quantity, s_dist, s_data FROM stock WHERE s_w_id = ? AND s_i_id = ? FOR UPDATE");
            stockUpd = c.prepareStatement("UPDATE stock SET s_quantity = ?, s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + 1,"
                    + " s_remote_cnt = s_remote_cnt + ? WHERE s_w_id = ? AND s_i_id = ?");
            insLine = c.prepareStatement("INSERT INTO order_line VALUES (?,?,?,?,?,?,NULL,?,?,?)");
            whseUpd = c.prepareStatement("UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?");
            whseRead = c.prepareStatement("SELECT w_name, w_street, w_city, w_zip FROM warehouse WHERE w_id = ?");
            distUpd = c.prepareStatement("UPDATE district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?");
            custById = c.prepareStatement("SELECT c_id, c_first, c_last, c_credit, c_balance FROM customer"
                    + " WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?");
            custByName = c.prepareStatement("SELECT c_id, c_first, c_last, c_credit, c_balance FROM customer"
                    + " WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first");
            custUpd = c.prepareStatement("UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?,"
                    + " c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?");
            custUpdBc = c.prepareStatement("UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?,"
                    + " c_payment_cnt = c_payment_cnt + 1, c_data = LEFT(CONCAT(?, c_data), 500)"
                    + " WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?");
            insHist = c.prepareStatement("INSERT INTO history VALUES (?,?,?,?,?,?,?,?)");
            lastOrder = c.prepareStatement("SELECT o.o_id, o.o_carrier_id, o.o_entry_d, l.ol_i_id, l.ol_supply_w_id, l.ol_quantity,"
                    + " l.ol_amount, l.ol_delivery_d, i.i_name FROM orders o"
                    + " JOIN order_line l ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id AND l.ol_o_id = o.o_id"
                    + " JOIN item i ON i.i_id = l.ol_i_id"
                    + " WHERE o.o_w_id = ? AND o.o_d_id = ? AND o.o_id = (SELECT MAX(o_id) FROM orders"
                    + " WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ?) ORDER BY l.ol_number");
            minNewOrder = c.prepareStatement("SELECT MIN(no_o_id) FROM new_order WHERE no_w_id = ? AND no_d_id = ?");
            delNewOrder = c.prepareStatement("DELETE FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?");
            orderCust = c.prepareStatement("SELECT o_c_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?");
            orderCarrier = c.prepareStatement("UPDATE orders SET o_carrier_id = ? WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?");
            lineDeliv = c.prepareStatement("UPDATE order_line SET ol_delivery_d = ? WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?");
            lineSum = c.prepareStatement("SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?");
            custDeliv = c.prepareStatement("UPDATE customer SET c_balance = c_balance + ?, c_delivery_cnt = c_delivery_cnt + 1"
                    + " WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?");
            distNextRead = c.prepareStatement("SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?");
            stockLevel = c.prepareStatement("SELECT COUNT(DISTINCT s.s_i_id) FROM order_line l JOIN stock s"
                    + " ON s.s_w_id = l.ol_w_id AND s.s_i_id = l.ol_i_id WHERE l.ol_w_id = ? AND l.ol_d_id = ?"
                    + " AND l.ol_o_id >= ? AND l.ol_o_id < ? AND s.s_quantity < ?");
        }

        int customerId() {
            return nurand(r, 1023, 1, customers, cId);
        }

        int itemId() {
            return nurand(r, 8191, 1, items, olId);
        }

        /** Runs one transaction; true when it committed (or rolled back as TPC-C asks). */
        boolean next() throws SQLException {
            int k = r.nextInt(100);
            try {
                if (k < 45) {
                    boolean ok = newOrder();
                    (ok ? newOrders : rollbacks).incrementAndGet();
                } else if (k < 88) {
                    payment();
                    payments.incrementAndGet();
                } else if (k < 92) {
                    orderStatus();
                    orderStatus.incrementAndGet();
                } else if (k < 96) {
                    long n = delivery();
                    deliveries.incrementAndGet();
                    deliveredOrders.addAndGet(n);
                } else {
                    stockLevel();
                    stockLevels.incrementAndGet();
                }
                return true;
            } catch (SQLException e) {
                insLine.clearBatch();
                c.rollback();
                aborted.incrementAndGet();
                if (!transientFailure(e)) run.error(e); // counted, reported; the terminal goes on
                return false;
            }
        }

        boolean newOrder() throws SQLException {
            int d = 1 + r.nextInt(DISTRICTS), cid = customerId(), cnt = 5 + r.nextInt(11);
            boolean invalid = r.nextInt(100) == 0;
            int[][] lines = new int[cnt][]; // item, supply warehouse, quantity
            for (int i = 0; i < cnt; i++) {
                int supply = warehouses > 1 && r.nextInt(100) == 0 ? 1 + r.nextInt(warehouses) : home;
                lines[i] = new int[] {invalid && i == cnt - 1 ? items + 1 : itemId(), supply, 1 + r.nextInt(10)};
            }
            // Lock stock rows in one global order: no deadlocks between new-orders.
            Arrays.sort(lines, (a, b) -> a[1] != b[1] ? Integer.compare(a[1], b[1]) : Integer.compare(a[0], b[0]));
            boolean allLocal = true;
            for (int[] l : lines) allLocal &= l[1] == home;

            BigDecimal discount, wTax, dTax;
            custWhse.setInt(1, home);
            custWhse.setInt(2, d);
            custWhse.setInt(3, cid);
            try (ResultSet rs = custWhse.executeQuery()) {
                if (!rs.next()) throw new SQLException("new-order: no customer " + home + "/" + d + "/" + cid);
                discount = rs.getBigDecimal(1);
                wTax = rs.getBigDecimal(4);
            }
            distNext.setInt(1, home);
            distNext.setInt(2, d);
            distNext.executeUpdate();
            int oid;
            distRead.setInt(1, home);
            distRead.setInt(2, d);
            try (ResultSet rs = distRead.executeQuery()) {
                rs.next();
                oid = rs.getInt(1);
                dTax = rs.getBigDecimal(2);
            }
            insOrder.setInt(1, home);
            insOrder.setInt(2, d);
            insOrder.setInt(3, oid);
            insOrder.setInt(4, cid);
            insOrder.setTimestamp(5, new Timestamp(System.currentTimeMillis()));
            insOrder.setInt(6, cnt);
            insOrder.setInt(7, allLocal ? 1 : 0);
            insOrder.executeUpdate();
            insNewOrder.setInt(1, home);
            insNewOrder.setInt(2, d);
            insNewOrder.setInt(3, oid);
            insNewOrder.executeUpdate();
            BigDecimal total = BigDecimal.ZERO;
            int number = 0;
            for (int[] l : lines) {
                BigDecimal price;
                itemRead.setInt(1, l[0]);
                try (ResultSet rs = itemRead.executeQuery()) {
                    if (!rs.next()) { // the 1% unknown item: roll the whole order back
                        insLine.clearBatch();
                        c.rollback();
                        return false;
                    }
                    price = rs.getBigDecimal(1);
                }
                int qty;
                String dist;
                stockLock.setInt(1, l[1]);
                stockLock.setInt(2, l[0]);
                try (ResultSet rs = stockLock.executeQuery()) {
                    if (!rs.next()) throw new SQLException("new-order: no stock " + l[1] + "/" + l[0]);
                    qty = rs.getInt(1);
                    dist = rs.getString(2);
                }
                qty = qty - l[2] >= 10 ? qty - l[2] : qty - l[2] + 91;
                stockUpd.setInt(1, qty);
                stockUpd.setInt(2, l[2]);
                stockUpd.setInt(3, l[1] == home ? 0 : 1);
                stockUpd.setInt(4, l[1]);
                stockUpd.setInt(5, l[0]);
                stockUpd.executeUpdate();
                BigDecimal amount = price.multiply(BigDecimal.valueOf(l[2])).setScale(2, RoundingMode.HALF_UP);
                total = total.add(amount);
                insLine.setInt(1, home);
                insLine.setInt(2, d);
                insLine.setInt(3, oid);
                insLine.setInt(4, ++number);
                insLine.setInt(5, l[0]);
                insLine.setInt(6, l[1]);
                insLine.setInt(7, l[2]);
                insLine.setBigDecimal(8, amount);
                insLine.setString(9, dist);
                insLine.addBatch();
            }
            insLine.executeBatch();
            // The total the terminal would display (exercises BigDecimal like the spec's formula).
            total.multiply(BigDecimal.ONE.subtract(discount)).multiply(BigDecimal.ONE.add(wTax).add(dTax));
            c.commit();
            return true;
        }

        /** Selects a customer by id (40%) or by last name (60%, the middle one by first name). */
        int[] customer(int w, int d) throws SQLException {
            PreparedStatement p;
            if (r.nextInt(100) < 60) {
                p = custByName;
                p.setInt(1, w);
                p.setInt(2, d);
                p.setString(3, lastName(nurand(r, 255, 0, lastNames() - 1, cLast)));
            } else {
                p = custById;
                p.setInt(1, w);
                p.setInt(2, d);
                p.setInt(3, customerId());
            }
            List<int[]> found = new ArrayList<>();
            try (ResultSet rs = p.executeQuery()) {
                while (rs.next()) {
                    found.add(new int[] {rs.getInt(1), "BC".equals(rs.getString(4)) ? 1 : 0});
                    readRows.incrementAndGet();
                }
            }
            if (found.isEmpty()) { // a last name nobody in this district has: fall back to an id
                return new int[] {customerId(), 0};
            }
            return found.get((found.size() - 1) / 2);
        }

        void payment() throws SQLException {
            int d = 1 + r.nextInt(DISTRICTS);
            int cw = home, cd = d;
            if (warehouses > 1 && r.nextInt(100) < 15) { // remote customer
                cw = 1 + r.nextInt(warehouses);
                cd = 1 + r.nextInt(DISTRICTS);
            }
            BigDecimal amount = money(r, 100, 500_000);
            whseUpd.setBigDecimal(1, amount);
            whseUpd.setInt(2, home);
            whseUpd.executeUpdate();
            whseRead.setInt(1, home);
            String wName;
            try (ResultSet rs = whseRead.executeQuery()) {
                rs.next();
                wName = rs.getString(1);
            }
            distUpd.setBigDecimal(1, amount);
            distUpd.setInt(2, home);
            distUpd.setInt(3, d);
            distUpd.executeUpdate();
            int[] cust = customer(cw, cd);
            PreparedStatement u = cust[1] == 1 ? custUpdBc : custUpd;
            int i = 1;
            u.setBigDecimal(i++, amount);
            u.setBigDecimal(i++, amount);
            if (cust[1] == 1) u.setString(i++, cust[0] + " " + cd + " " + cw + " " + d + " " + home + " " + amount + " | ");
            u.setInt(i++, cw);
            u.setInt(i++, cd);
            u.setInt(i, cust[0]);
            u.executeUpdate();
            insHist.setInt(1, cust[0]);
            insHist.setInt(2, cd);
            insHist.setInt(3, cw);
            insHist.setInt(4, d);
            insHist.setInt(5, home);
            insHist.setTimestamp(6, new Timestamp(System.currentTimeMillis()));
            insHist.setBigDecimal(7, amount);
            insHist.setString(8, (wName + "    " + d).substring(0, Math.min(24, wName.length() + 5)));
            insHist.executeUpdate();
            c.commit();
        }

        void orderStatus() throws SQLException {
            int d = 1 + r.nextInt(DISTRICTS);
            int[] cust = customer(home, d);
            lastOrder.setInt(1, home);
            lastOrder.setInt(2, d);
            lastOrder.setInt(3, home);
            lastOrder.setInt(4, d);
            lastOrder.setInt(5, cust[0]);
            try (ResultSet rs = lastOrder.executeQuery()) {
                while (rs.next()) readRows.incrementAndGet();
            }
            c.commit();
        }

        long delivery() throws SQLException {
            int carrier = 1 + r.nextInt(10);
            Timestamp now = new Timestamp(System.currentTimeMillis());
            long delivered = 0;
            for (int d = 1; d <= DISTRICTS; d++) {
                int oid;
                minNewOrder.setInt(1, home);
                minNewOrder.setInt(2, d);
                try (ResultSet rs = minNewOrder.executeQuery()) {
                    rs.next();
                    oid = rs.getInt(1);
                    if (rs.wasNull()) continue;
                }
                delNewOrder.setInt(1, home);
                delNewOrder.setInt(2, d);
                delNewOrder.setInt(3, oid);
                if (delNewOrder.executeUpdate() == 0) continue; // another delivery took it
                int cid;
                orderCust.setInt(1, home);
                orderCust.setInt(2, d);
                orderCust.setInt(3, oid);
                try (ResultSet rs = orderCust.executeQuery()) {
                    if (!rs.next()) throw new SQLException("delivery: no order " + home + "/" + d + "/" + oid);
                    cid = rs.getInt(1);
                }
                orderCarrier.setInt(1, carrier);
                orderCarrier.setInt(2, home);
                orderCarrier.setInt(3, d);
                orderCarrier.setInt(4, oid);
                orderCarrier.executeUpdate();
                lineDeliv.setTimestamp(1, now);
                lineDeliv.setInt(2, home);
                lineDeliv.setInt(3, d);
                lineDeliv.setInt(4, oid);
                lineDeliv.executeUpdate();
                BigDecimal sum;
                lineSum.setInt(1, home);
                lineSum.setInt(2, d);
                lineSum.setInt(3, oid);
                try (ResultSet rs = lineSum.executeQuery()) {
                    rs.next();
                    sum = rs.getBigDecimal(1);
                }
                custDeliv.setBigDecimal(1, sum == null ? BigDecimal.ZERO : sum);
                custDeliv.setInt(2, home);
                custDeliv.setInt(3, d);
                custDeliv.setInt(4, cid);
                custDeliv.executeUpdate();
                delivered++;
            }
            c.commit();
            return delivered;
        }

        void stockLevel() throws SQLException {
            int d = 1 + r.nextInt(DISTRICTS), next;
            distNextRead.setInt(1, home);
            distNextRead.setInt(2, d);
            try (ResultSet rs = distNextRead.executeQuery()) {
                rs.next();
                next = rs.getInt(1);
            }
            stockLevel.setInt(1, home);
            stockLevel.setInt(2, d);
            stockLevel.setInt(3, next - 20);
            stockLevel.setInt(4, next);
            stockLevel.setInt(5, 10 + r.nextInt(11));
            try (ResultSet rs = stockLevel.executeQuery()) {
                rs.next();
                readRows.addAndGet(rs.getInt(1));
            }
            c.commit();
        }

        @Override
        public void close() {
            closeQuietly(c);
        }
    }

    // ---------------------------------------------------------------- checks

    private long count(Statement s, String sql) throws SQLException {
        try (ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    @Override
    void finish(Run run) throws Exception {
        long committed = newOrders.get() + payments.get() + orderStatus.get() + deliveries.get() + stockLevels.get();
        String mix = "new-order=" + newOrders + " payment=" + payments + " order-status=" + orderStatus + " delivery=" + deliveries
                + " stock-level=" + stockLevels + " rolled-back=" + rollbacks + " aborted=" + aborted;
        boolean complete = loaded.getCount() == 0 && !loadFailed;
        run.check("load", complete, complete
                ? warehouses + " warehouses, " + warehouses * DISTRICTS * customers + " customers, " + items + " items"
                : loaded.getCount() + " load tasks left at the deadline" + (loadFailed ? " (a load task failed)" : ""));
        run.check("committed", committed > 0, committed + " transactions committed: " + mix);
        if (!complete) return;
        List<String> bad = new ArrayList<>();
        long loadedOrders = (long) warehouses * DISTRICTS * customers;
        long loadedNew = (long) warehouses * DISTRICTS * newOrdersPerDistrict;
        try (Statement s = admin.createStatement()) {
            long orders = count(s, "SELECT COUNT(*) FROM orders");
            long newOrderRows = count(s, "SELECT COUNT(*) FROM new_order");
            long lines = count(s, "SELECT COUNT(*) FROM order_line");
            long olCnt = count(s, "SELECT SUM(o_ol_cnt) FROM orders");
            long history = count(s, "SELECT COUNT(*) FROM history");
            if (orders != loadedOrders + newOrders.get()) bad.add("orders " + orders + " != " + loadedOrders + "+" + newOrders);
            if (newOrderRows != loadedNew + newOrders.get() - deliveredOrders.get()) {
                bad.add("new_order " + newOrderRows + " != " + loadedNew + "+" + newOrders + "-" + deliveredOrders);
            }
            if (lines != olCnt) bad.add("order_line " + lines + " != sum(o_ol_cnt) " + olCnt);
            if (history != loadedOrders + payments.get()) bad.add("history " + history + " != " + loadedOrders + "+" + payments);
            // TPC-C consistency condition 1: W_YTD = sum(D_YTD).
            long ytd = count(s, "SELECT COUNT(*) FROM warehouse w WHERE w.w_ytd <> (SELECT SUM(d_ytd) FROM district d WHERE d.d_w_id = w.w_id)");
            if (ytd != 0) bad.add(ytd + " warehouse(s) with w_ytd != sum(d_ytd)");
            // Condition 2: D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID).
            long next = count(s, "SELECT COUNT(*) FROM district d WHERE d.d_next_o_id - 1 <> (SELECT MAX(o_id) FROM orders o"
                    + " WHERE o.o_w_id = d.d_w_id AND o.o_d_id = d.d_id) OR d.d_next_o_id - 1 < (SELECT COALESCE(MAX(no_o_id), 0)"
                    + " FROM new_order n WHERE n.no_w_id = d.d_w_id AND n.no_d_id = d.d_id)");
            if (next != 0) bad.add(next + " district(s) with d_next_o_id - 1 != max(o_id)");
            // Every undelivered order (o_carrier_id null) is in new_order and the other way round.
            long undelivered = count(s, "SELECT COUNT(*) FROM orders WHERE o_carrier_id IS NULL");
            if (undelivered != newOrderRows) bad.add("undelivered orders " + undelivered + " != new_order " + newOrderRows);
            run.check("consistency", bad.isEmpty(), bad.isEmpty()
                    ? "orders=" + orders + " new_order=" + newOrderRows + " order_line=" + lines + " history=" + history
                            + " delivered=" + deliveredOrders + ", w_ytd = sum(d_ytd), d_next_o_id - 1 = max(o_id)"
                    : String.join("; ", bad));
        }
    }

    @Override
    void close() {
        if (admin == null) return;
        try (Statement s = admin.createStatement()) {
            s.execute("SHUTDOWN IMMEDIATELY");
        } catch (SQLException ignored) {
            // the database is in memory: it goes with the JVM anyway
        }
        closeQuietly(admin);
    }
}
