// Command tlog-verify checks the service's transparency log with Go's own sumdb packages
// (golang.org/x/mod/sumdb/note and sumdb/tlog), code nobody on this project wrote. It reads the
// origin over HTTP and trusts nothing but the verifier key it is given.
//
//	tlog-verify -url URL -vkey VKEY checkpoint
//	    the published checkpoint is signed by VKEY and the tiles hash to its root
//	tlog-verify -url URL -vkey VKEY [-api-key KEY | -bearer TOKEN] receipt CHECK_ID
//	    the receipt's leaf is at its index in a tree VKEY signed
//	tlog-verify -url URL -vkey VKEY consistency OLD_CHECKPOINT_FILE
//	    the published checkpoint extends the old one, proven from the tiles alone
//	tlog-verify -vkey VKEY receipt-file RECEIPT_JSON_FILE
//	    the same check as receipt, offline, of a receipt saved to a file (for example the one
//	    taken out of an audio file's Content Credentials); no -url needed
//
// It prints one line starting with "ok" and exits 0, or prints the failure and exits 1.
package main

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

const proofHeader = "c2sp.org/tlog-proof@v1"

var (
	baseURL = flag.String("url", "", "the origin's address")
	vkey    = flag.String("vkey", "", "the log's note verifier key")
	apiKey  = flag.String("api-key", "", "platform API key for receipts")
	bearer  = flag.String("bearer", "", "access token for receipts")
)

func main() {
	flag.Parse()
	offline := flag.Arg(0) == "receipt-file"
	if (*baseURL == "" && !offline) || *vkey == "" || flag.NArg() < 1 {
		fail(errors.New("usage: tlog-verify -url URL -vkey VKEY checkpoint | receipt CHECK_ID | consistency OLD_CHECKPOINT_FILE; tlog-verify -vkey VKEY receipt-file FILE"))
	}
	verifier, err := note.NewVerifier(*vkey)
	if err != nil {
		fail(fmt.Errorf("verifier key: %w", err))
	}
	var result string
	switch flag.Arg(0) {
	case "checkpoint":
		result, err = checkCheckpoint(verifier)
	case "receipt":
		result, err = checkReceipt(verifier, flag.Arg(1))
	case "consistency":
		result, err = checkConsistency(verifier, flag.Arg(1))
	case "receipt-file":
		result, err = checkReceiptFile(verifier, flag.Arg(1))
	default:
		err = fmt.Errorf("unknown command %q", flag.Arg(0))
	}
	if err != nil {
		fail(err)
	}
	fmt.Println("ok " + result)
}

func fail(err error) {
	fmt.Println("FAIL " + err.Error())
	os.Exit(1)
}

func get(path string, header http.Header) ([]byte, error) {
	request, err := http.NewRequest("GET", strings.TrimSuffix(*baseURL, "/")+path, nil)
	if err != nil {
		return nil, err
	}
	for name, values := range header {
		request.Header[name] = values
	}
	response, err := http.DefaultClient.Do(request)
	if err != nil {
		return nil, err
	}
	defer response.Body.Close()
	body, err := io.ReadAll(response.Body)
	if err != nil {
		return nil, err
	}
	if response.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %d %s", path, response.StatusCode, body)
	}
	return body, nil
}

// openCheckpoint verifies a signed checkpoint with the verifier and reads its three lines.
// tlog.ParseTree expects the checksum database's own origin line, so the C2SP lines are read here.
func openCheckpoint(verifier note.Verifier, signed []byte) (tlog.Tree, error) {
	opened, err := note.Open(signed, note.VerifierList(verifier))
	if err != nil {
		return tlog.Tree{}, fmt.Errorf("checkpoint signature: %w", err)
	}
	lines := strings.SplitN(opened.Text, "\n", 4)
	if len(lines) < 4 || lines[0] != verifier.Name() {
		return tlog.Tree{}, fmt.Errorf("checkpoint is not of log %s", verifier.Name())
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || size < 0 || strconv.FormatInt(size, 10) != lines[1] {
		return tlog.Tree{}, fmt.Errorf("checkpoint size %q", lines[1])
	}
	root, err := base64.StdEncoding.DecodeString(lines[2])
	if err != nil || len(root) != tlog.HashSize {
		return tlog.Tree{}, fmt.Errorf("checkpoint root %q", lines[2])
	}
	var hash tlog.Hash
	copy(hash[:], root)
	return tlog.Tree{N: size, Hash: hash}, nil
}

func publishedCheckpoint(verifier note.Verifier) (tlog.Tree, error) {
	signed, err := get("/tlog/checkpoint", nil)
	if err != nil {
		return tlog.Tree{}, err
	}
	return openCheckpoint(verifier, signed)
}

// tileReader fetches C2SP tiles: Go's own paths carry the tile height ("tile/8/L/N"), C2SP's do not.
type tileReader struct{}

func (tileReader) Height() int { return 8 }

func (tileReader) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	data := make([][]byte, len(tiles))
	for i, tile := range tiles {
		body, err := get("/tlog/"+strings.Replace(tile.Path(), "tile/8/", "tile/", 1), nil)
		if err != nil {
			return nil, err
		}
		if len(body) != tile.W*tlog.HashSize {
			return nil, fmt.Errorf("tile %s is %d bytes", tile.Path(), len(body))
		}
		data[i] = body
	}
	return data, nil
}

func (tileReader) SaveTiles([]tlog.Tile, [][]byte) {}

func checkCheckpoint(verifier note.Verifier) (string, error) {
	tree, err := publishedCheckpoint(verifier)
	if err != nil {
		return "", err
	}
	// TileHashReader authenticates every tile it reads against the tree's root.
	root, err := tlog.TreeHash(tree.N, tlog.TileHashReader(tree, tileReader{}))
	if err != nil {
		return "", fmt.Errorf("tiles: %w", err)
	}
	if root != tree.Hash {
		return "", errors.New("the tiles do not hash to the signed root")
	}
	return fmt.Sprintf("checkpoint size=%d root=%s", tree.N, tree.Hash), nil
}

type receipt struct {
	CheckID string `json:"check_id"`
	Index   int64  `json:"index"`
	Leaf    string `json:"leaf"`
	Proof   string `json:"proof"`
}

func checkReceipt(verifier note.Verifier, checkID string) (string, error) {
	header := http.Header{}
	if *apiKey != "" {
		header.Set("X-API-Key", *apiKey)
	}
	if *bearer != "" {
		header.Set("Authorization", "Bearer "+*bearer)
	}
	body, err := get("/api/v1/protect/audit-log/"+checkID+"/receipt", header)
	if err != nil {
		return "", err
	}
	return verifyReceipt(verifier, body)
}

func checkReceiptFile(verifier note.Verifier, file string) (string, error) {
	body, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	return verifyReceipt(verifier, body)
}

// verifyReceipt checks a receipt's JSON: the proof's checkpoint is signed by the verifier, the leaf
// is at its index in that tree, and the leaf is the entry the receipt names.
func verifyReceipt(verifier note.Verifier, body []byte) (string, error) {
	var r receipt
	if err := json.Unmarshal(body, &r); err != nil {
		return "", fmt.Errorf("receipt: %w", err)
	}
	index, path, signed, err := parseProof(r.Proof)
	if err != nil {
		return "", err
	}
	if index != r.Index {
		return "", fmt.Errorf("the proof is for index %d, the receipt says %d", index, r.Index)
	}
	tree, err := openCheckpoint(verifier, signed)
	if err != nil {
		return "", err
	}
	if err := tlog.CheckRecord(path, tree.N, tree.Hash, index, tlog.RecordHash([]byte(r.Leaf))); err != nil {
		return "", fmt.Errorf("inclusion: %w", err)
	}
	var leaf struct {
		CheckID string `json:"check_id"`
		Seq     int64  `json:"seq"`
	}
	if err := json.Unmarshal([]byte(r.Leaf), &leaf); err != nil || leaf.CheckID != r.CheckID || leaf.Seq != index+1 {
		return "", errors.New("the leaf is not the entry the receipt names")
	}
	return fmt.Sprintf("receipt index=%d size=%d", index, tree.N), nil
}

// parseProof reads a c2sp.org/tlog-proof@v1 document.
func parseProof(text string) (int64, tlog.RecordProof, []byte, error) {
	head, checkpoint, found := strings.Cut(text, "\n\n")
	if !found {
		return 0, nil, nil, errors.New("proof: no checkpoint")
	}
	lines := strings.Split(head, "\n")
	if lines[0] != proofHeader {
		return 0, nil, nil, errors.New("proof: not " + proofHeader)
	}
	lines = lines[1:]
	if len(lines) > 0 && strings.HasPrefix(lines[0], "extra ") {
		lines = lines[1:]
	}
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "index ") {
		return 0, nil, nil, errors.New("proof: no index line")
	}
	index, err := strconv.ParseInt(strings.TrimPrefix(lines[0], "index "), 10, 64)
	if err != nil || index < 0 {
		return 0, nil, nil, errors.New("proof: bad index")
	}
	var path tlog.RecordProof
	for _, line := range lines[1:] {
		raw, err := base64.StdEncoding.DecodeString(line)
		if err != nil || len(raw) != tlog.HashSize {
			return 0, nil, nil, fmt.Errorf("proof: bad hash %q", line)
		}
		var hash tlog.Hash
		copy(hash[:], raw)
		path = append(path, hash)
	}
	return index, path, []byte(checkpoint), nil
}

func checkConsistency(verifier note.Verifier, oldFile string) (string, error) {
	oldSigned, err := os.ReadFile(oldFile)
	if err != nil {
		return "", err
	}
	old, err := openCheckpoint(verifier, oldSigned)
	if err != nil {
		return "", fmt.Errorf("old %w", err)
	}
	current, err := publishedCheckpoint(verifier)
	if err != nil {
		return "", err
	}
	if current.N < old.N {
		return "", fmt.Errorf("the log shrank from %d to %d", old.N, current.N)
	}
	proof, err := tlog.ProveTree(current.N, old.N, tlog.TileHashReader(current, tileReader{}))
	if err != nil {
		return "", fmt.Errorf("tiles: %w", err)
	}
	if err := tlog.CheckTree(proof, current.N, current.Hash, old.N, old.Hash); err != nil {
		return "", fmt.Errorf("consistency: %w", err)
	}
	return fmt.Sprintf("consistent old=%d new=%d", old.N, current.N), nil
}
