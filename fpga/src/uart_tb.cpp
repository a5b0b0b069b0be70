// Simulated board for fp8gen's UART test shell: a Verilator model of fp8gen_board_top
// whose serial line is bridged to this process's stdin/stdout, so the host code talks to it
// exactly as it talks to /dev/ttyUSB0.
//
// usage: uart_tb CLKS_PER_BIT REQUEST_BYTES RESPONSE_BYTES
// For every REQUEST_BYTES bytes read from stdin, the bytes are sent bit by bit on uart_rx
// (8N1), uart_tx is decoded at bit centres, and the RESPONSE_BYTES bytes of the answer are
// written to stdout. Exit status: 0 at end of input, 2 on a framing error, 3 on a timeout.
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <vector>
#include "Vfp8gen_board_top.h"
#include "verilated.h"

static Vfp8gen_board_top* top;
static long cpb;

// Serial decoder state for uart_tx.
static int dec_state = 0;  // 0 idle, 1 start, 2 data, 3 stop
static long dec_cnt = 0;
static int dec_bit = 0;
static unsigned dec_byte = 0;
static std::vector<uint8_t> received;

static void tick() {
    top->clk = 0;
    top->eval();
    top->clk = 1;
    top->eval();
    int tx = top->uart_tx;
    switch (dec_state) {
    case 0:
        if (!tx) { dec_state = 1; dec_cnt = cpb / 2; }
        break;
    case 1:
        if (--dec_cnt <= 0) {
            if (tx) { dec_state = 0; break; }
            dec_state = 2; dec_cnt = cpb; dec_bit = 0; dec_byte = 0;
        }
        break;
    case 2:
        if (--dec_cnt <= 0) {
            dec_byte |= (unsigned)tx << dec_bit;
            dec_cnt = cpb;
            if (++dec_bit == 8) dec_state = 3;
        }
        break;
    case 3:
        if (--dec_cnt <= 0) {
            if (!tx) { std::fprintf(stderr, "uart_tb: framing error on uart_tx\n"); std::exit(2); }
            received.push_back((uint8_t)dec_byte);
            dec_state = 0;
        }
        break;
    }
}

static void send_byte(uint8_t b) {
    int bits[10];
    bits[0] = 0;
    for (int i = 0; i < 8; i++) bits[1 + i] = (b >> i) & 1;
    bits[9] = 1;
    for (int i = 0; i < 10; i++) {
        top->uart_rx = bits[i];
        for (long c = 0; c < cpb; c++) tick();
    }
}

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: uart_tb CLKS_PER_BIT REQUEST_BYTES RESPONSE_BYTES\n");
        return 1;
    }
    cpb = std::atol(argv[1]);
    long req = std::atol(argv[2]);
    long resp = std::atol(argv[3]);
    Verilated::commandArgs(1, argv);
    top = new Vfp8gen_board_top;
    top->uart_rx = 1;
    top->clk = 0;
    for (int i = 0; i < 64; i++) tick();
    std::vector<uint8_t> frame(req);
    for (;;) {
        size_t got = std::fread(frame.data(), 1, req, stdin);
        if (got == 0) break;
        if ((long)got != req) { std::fprintf(stderr, "uart_tb: short request\n"); return 1; }
        received.clear();
        for (long i = 0; i < req; i++) send_byte(frame[i]);
        long limit = (resp + 4) * 12 * cpb + 100000;
        while ((long)received.size() < resp && limit-- > 0) tick();
        if ((long)received.size() < resp) {
            std::fprintf(stderr, "uart_tb: timeout, %zu of %ld response bytes\n", received.size(), resp);
            return 3;
        }
        std::fwrite(received.data(), 1, resp, stdout);
        std::fflush(stdout);
    }
    top->final();
    delete top;
    return 0;
}
